//! Coordinate order for BAM records, as `samtools sort` gives it: by reference (unmapped
//! records last), then position, then strand, and records equal in all three in the order
//! they came. Records are held as BAM encodes them, up to a memory budget; beyond it each
//! sorted run goes to an unnamed temporary file (removed by the system whatever happens) and
//! the runs are merged at the end.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};

/// The order of one record: reference index (unmapped, -1, last), position + 1, reverse strand.
type Key = (u32, u32, bool);

/// The key of a BAM record given with its 4-byte length in front (`block_size`, then
/// `refID`, `pos`, ..., `flag` at bytes 18-19).
fn key(record: &[u8]) -> Key {
    let i32_at = |at: usize| i32::from_le_bytes(record[at..at + 4].try_into().expect("4 bytes"));
    let flag = u16::from_le_bytes([record[18], record[19]]);
    (i32_at(4) as u32, i32_at(8).wrapping_add(1) as u32, flag & 0x10 != 0)
}

/// Records gathered for sorting.
pub struct Sorter {
    /// The records held, one after another (each with its length in front).
    held: Vec<u8>,
    /// Each held record's key and span of `held`, in the order they came.
    spans: Vec<(Key, usize, usize)>,
    /// Bytes held before a run is written out.
    budget: usize,
    /// Sorted runs written out, in the order they were.
    runs: Vec<File>,
}

/// Bytes of bookkeeping per record held, counted against the budget.
const SPAN_BYTES: usize = std::mem::size_of::<(Key, usize, usize)>();

impl Sorter {
    /// A sorter holding about `budget` bytes in memory at most.
    pub fn new(budget: usize) -> Sorter {
        Sorter { held: Vec::new(), spans: Vec::new(), budget: budget.max(1 << 20), runs: Vec::new() }
    }

    /// Adds one BAM record, its 4-byte length in front.
    pub fn push(&mut self, record: &[u8]) -> io::Result<()> {
        if record.len() < 36 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "a BAM record shorter than its fixed fields"));
        }
        let start = self.held.len();
        self.held.extend_from_slice(record);
        self.spans.push((key(record), start, record.len()));
        if self.held.len() + self.spans.len() * SPAN_BYTES >= self.budget {
            self.write_run()?;
        }
        Ok(())
    }

    /// Runs written to temporary files so far (0: everything fitted in memory).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// The held records in order (stable: equal keys keep the order they came in).
    fn sorted_spans(&mut self) -> Vec<(Key, usize, usize)> {
        let mut spans = std::mem::take(&mut self.spans);
        spans.sort_by_key(|&(k, _, _)| k);
        spans
    }

    fn write_run(&mut self) -> io::Result<()> {
        let mut file = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        for (_, start, len) in self.sorted_spans() {
            file.write_all(&self.held[start..start + len])?;
        }
        let mut file = file.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        self.runs.push(file);
        self.held.clear();
        Ok(())
    }

    /// Writes every record, in coordinate order, to `out`.
    pub fn finish(mut self, out: &mut impl Write) -> io::Result<()> {
        if self.runs.is_empty() {
            for (_, start, len) in self.sorted_spans() {
                out.write_all(&self.held[start..start + len])?;
            }
            return Ok(());
        }
        if !self.spans.is_empty() {
            self.write_run()?;
        }
        merge(self.runs, out)
    }
}

/// The next record of a run, or `None` at its end.
fn next_record(run: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut size = [0u8; 4];
    match run.read_exact(&mut size) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let mut record = size.to_vec();
    record.resize(4 + u32::from_le_bytes(size) as usize, 0);
    run.read_exact(&mut record[4..])?;
    Ok(Some(record))
}

/// Merges sorted runs: the smallest key first, and of equal keys the earlier run's (the
/// records that came first).
fn merge(runs: Vec<File>, out: &mut impl Write) -> io::Result<()> {
    let mut runs: Vec<BufReader<File>> = runs.into_iter().map(|f| BufReader::with_capacity(1 << 20, f)).collect();
    let mut heads = BinaryHeap::new();
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some(record) = next_record(run)? {
            heads.push(Reverse((key(&record), i, record)));
        }
    }
    while let Some(Reverse((_, i, record))) = heads.pop() {
        out.write_all(&record)?;
        if let Some(next) = next_record(&mut runs[i])? {
            heads.push(Reverse((key(&next), i, next)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BAM-like record: length, refID, pos, fixed fields with `flag`, then `id` as its body.
    fn record(ref_id: i32, pos: i32, reverse: bool, id: u8) -> Vec<u8> {
        let mut r = vec![0u8; 36];
        r[0..4].copy_from_slice(&32u32.to_le_bytes());
        r[4..8].copy_from_slice(&ref_id.to_le_bytes());
        r[8..12].copy_from_slice(&pos.to_le_bytes());
        r[18..20].copy_from_slice(&(if reverse { 0x10u16 } else { 0 }).to_le_bytes());
        r[35] = id;
        r
    }

    fn sort(records: &[Vec<u8>], budget: usize) -> (Vec<u8>, usize) {
        let mut sorter = Sorter { budget, ..Sorter::new(0) };
        records.iter().for_each(|r| sorter.push(r).unwrap());
        let runs = sorter.runs() + usize::from(!sorter.spans.is_empty() && sorter.runs() > 0);
        let mut out = Vec::new();
        sorter.finish(&mut out).unwrap();
        (out.chunks(36).map(|r| r[35]).collect(), runs)
    }

    /// Unmapped last, then reference, position, strand; ties in the order they came, the same
    /// whether the records fit in memory or are merged from many runs.
    #[test]
    fn coordinate_order_in_memory_and_merged() {
        let records = vec![
            record(-1, -1, false, 0),
            record(1, 5, false, 1),
            record(0, 9, true, 2),
            record(0, 9, false, 3),
            record(-1, -1, false, 4),
            record(0, 9, false, 5),
            record(0, -1, false, 6),
            record(1, 5, false, 7),
        ];
        let expected = vec![6, 3, 5, 2, 1, 7, 0, 4];
        assert_eq!(sort(&records, usize::MAX), (expected.clone(), 0));
        let (order, runs) = sort(&records, 36 + SPAN_BYTES);
        assert_eq!((order, runs), (expected, records.len()));
    }
}
