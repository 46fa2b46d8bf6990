//! Reading reads (FASTQ or FASTA, plain or gzip) in batches, prepared as bwa's bwaseqio.c
//! prepares them: bases as codes 0..=3 (A C G T, either case) and 4 (N, IUPAC, anything
//! else), qualities trimmed with `-q`, names cut at the first whitespace and stripped of a
//! trailing `/1` or `/2`, and records with an empty sequence skipped (bwa_read_seq skips
//! them, so they have no `.sai` record and no SAM line).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use needletail::parser::FastxReader;

/// Longest read we align. BWA keeps positions in 16-bit fields of its search stack; GPU
/// scratch is sized by this, so longer reads are an error, never silently truncated.
pub const MAX_READ_LEN: usize = 4096;

/// bwa's BWA_MIN_RDLEN: `-q` trimming never shortens a read below this.
const MIN_TRIMMED_LEN: usize = 35;

/// One read, as the aligner and `samse` need it.
#[derive(Clone, Debug, Default)]
pub struct ReadSeq {
    pub name: String,
    /// Base codes in read orientation, the whole read (before trimming).
    pub codes: Vec<u8>,
    /// Phred+33 qualities as in the file (empty for FASTA), after `-I` conversion.
    pub qual: Vec<u8>,
    /// Length aligned after `-q` trimming (`<= codes.len()`).
    pub len: usize,
}

impl ReadSeq {
    /// The aligned part of the read.
    pub fn aligned(&self) -> &[u8] {
        &self.codes[..self.len]
    }
}

/// How reads are prepared; the fields of bwa's gap_opt_t that bwa_read_seq uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// `-q`: quality threshold for trimming from the 3' end (0 = off).
    pub trim_qual: i32,
    /// `-I`: qualities are Illumina 1.3+ (Phred+64).
    pub illumina13: bool,
    /// Keep only what aln needs (codes and trimmed length): names and qualities are not
    /// copied, which saves two allocations per read on the reader thread.
    pub sequence_only: bool,
}

/// bwa's nst_nt4_table for reads: A C G T (either case) to 0..=3, anything else to 4.
const BASE_CODES: [u8; 256] = {
    let mut table = [4u8; 256];
    let mut i = 0;
    while i < 4 {
        table[b"ACGT"[i] as usize] = i as u8;
        table[b"acgt"[i] as usize] = i as u8;
        i += 1;
    }
    table
};

#[inline]
pub fn base_code(b: u8) -> u8 {
    BASE_CODES[b as usize]
}

/// bwa_trim_read: the length that maximises the sum of (threshold - quality) from the end.
pub fn trimmed_len(qual: &[u8], trim_qual: i32) -> usize {
    if trim_qual < 1 || qual.is_empty() {
        return qual.len();
    }
    let (mut sum, mut best, mut best_len) = (0i32, 0i32, qual.len());
    let mut l = qual.len();
    while l > MIN_TRIMMED_LEN {
        l -= 1;
        sum += trim_qual - (qual[l] as i32 - 33);
        if sum < 0 {
            break;
        }
        if sum > best {
            best = sum;
            best_len = l;
        }
    }
    best_len
}

/// Errors reading reads: always with the file and the record.
#[derive(Debug, thiserror::Error)]
pub enum ReadsError {
    /// The io::Error is part of the message, not a `source`: anyhow's `{:#}` would print it twice.
    #[error("{path}: {error}")]
    Open { path: PathBuf, error: std::io::Error },
    #[error("{path}: record {record}: {msg}")]
    Parse { path: PathBuf, record: u64, msg: String },
    #[error("{path}: record {record} ('{name}'): read of {len} bases is longer than the {max} bcuda supports")]
    TooLong { path: PathBuf, record: u64, name: String, len: usize, max: usize },
    #[error("{path}: no reads: the file is empty")]
    Empty { path: PathBuf },
}

/// Counts bytes read from the (possibly compressed) file, for progress in percent.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Streams a read file in batches of at most `batch_size` reads.
pub struct ReadBatchReader {
    path: PathBuf,
    parser: Box<dyn FastxReader>,
    opts: ReadOptions,
    /// Records of the file so far, for errors.
    records: u64,
    /// Reads delivered so far (records less the empty ones).
    reads: u64,
    empty: EmptyReads,
    bytes_read: Arc<AtomicU64>,
    file_len: u64,
}

impl ReadBatchReader {
    /// Opens `path`, or standard input for `-` (as bwa); gzip is recognised by its magic
    /// bytes either way.
    pub fn open(path: &Path, opts: ReadOptions) -> Result<ReadBatchReader, ReadsError> {
        if path.as_os_str() == "-" {
            return ReadBatchReader::from_reader(Box::new(std::io::stdin()), Path::new("standard input"), 0, opts);
        }
        let file = File::open(path).map_err(|error| ReadsError::Open { path: path.to_path_buf(), error })?;
        let file_len = file.metadata().map(|m| m.len()).unwrap_or(0);
        ReadBatchReader::from_reader(Box::new(file), path, file_len, opts)
    }

    /// Reads from `input` (plain or gzip); `name` is used in errors, `len` is its size in
    /// bytes for progress (0 when unknown).
    pub fn from_reader(input: Box<dyn Read + Send>, name: &Path, len: u64, opts: ReadOptions) -> Result<ReadBatchReader, ReadsError> {
        let path = name.to_path_buf();
        let bytes_read = Arc::new(AtomicU64::new(0));
        let counting = CountingReader { inner: input, count: bytes_read.clone() };
        let input = crate::decompress::gunzip_ahead(Box::new(counting)).map_err(|error| ReadsError::Open { path: path.clone(), error })?;
        let parser = needletail::parse_fastx_reader(input).map_err(|e| {
            if e.kind == needletail::errors::ParseErrorKind::EmptyFile {
                ReadsError::Empty { path: path.clone() }
            } else {
                ReadsError::Parse { path: path.clone(), record: 1, msg: e.to_string() }
            }
        })?;
        Ok(ReadBatchReader { path, parser, opts, records: 0, reads: 0, empty: EmptyReads::default(), bytes_read, file_len: len })
    }

    /// Reads delivered so far, as bwa counts them (records with an empty sequence skipped).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The records with an empty sequence skipped so far.
    pub fn empty_reads(&self) -> &EmptyReads {
        &self.empty
    }

    /// Bytes of the file consumed and the file's size (0 for standard input), for a percentage.
    pub fn position(&self) -> (u64, u64) {
        (self.bytes_read.load(Ordering::Relaxed), self.file_len)
    }

    /// The next batch (empty at the end of the file).
    pub fn next_batch(&mut self, batch_size: usize) -> Result<Vec<ReadSeq>, ReadsError> {
        let mut batch = Vec::with_capacity(batch_size.min(1 << 20));
        while batch.len() < batch_size {
            let Some(rec) = self.parser.next() else { break };
            self.records += 1;
            let rec = rec.map_err(|e| ReadsError::Parse { path: self.path.clone(), record: self.records, msg: e.to_string() })?;
            let id = rec.id();
            let name_end = id.iter().position(|b| b.is_ascii_whitespace()).unwrap_or(id.len());
            let mut name = &id[..name_end];
            if name.len() > 2 && name[name.len() - 2] == b'/' && matches!(name[name.len() - 1], b'1' | b'2') {
                name = &name[..name.len() - 2];
            }
            let seq = rec.seq();
            if seq.is_empty() {
                self.empty.skip(self.records, name);
                continue;
            }
            if seq.len() > MAX_READ_LEN {
                let name = String::from_utf8_lossy(name).into_owned();
                return Err(ReadsError::TooLong { path: self.path.clone(), record: self.records, name, len: seq.len(), max: MAX_READ_LEN });
            }
            let codes: Vec<u8> = seq.iter().map(|&b| base_code(b)).collect();
            let raw_qual = rec.qual().unwrap_or_default();
            let qual: std::borrow::Cow<[u8]> = if self.opts.illumina13 {
                raw_qual.iter().map(|q| q.wrapping_sub(31)).collect::<Vec<u8>>().into()
            } else {
                raw_qual.into()
            };
            // Without qualities (FASTA) nothing is trimmed: the whole read is aligned.
            let len = if qual.is_empty() { codes.len() } else { trimmed_len(&qual, self.opts.trim_qual) };
            if self.opts.sequence_only {
                batch.push(ReadSeq { codes, len, ..Default::default() });
            } else {
                batch.push(ReadSeq { name: String::from_utf8_lossy(name).into_owned(), codes, qual: qual.into_owned(), len });
            }
            self.reads += 1;
        }
        Ok(batch)
    }
}

/// Records with an empty sequence that a reader skipped: how many, and the first one.
#[derive(Clone, Debug, Default)]
pub struct EmptyReads {
    pub count: u64,
    /// Record number (from 1) and name of the first.
    pub first: Option<(u64, String)>,
}

impl EmptyReads {
    fn skip(&mut self, record: u64, name: &[u8]) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((record, String::from_utf8_lossy(name).into_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_follows_bwa() {
        // Qualities 'I' (40) then a tail of '#' (2): with -q 15 the tail goes.
        let mut q = vec![b'I'; 50];
        q.extend(vec![b'#'; 10]);
        assert_eq!(trimmed_len(&q, 15), 50);
        assert_eq!(trimmed_len(&q, 0), 60);
        // Never below 35 bases.
        assert_eq!(trimmed_len(&[b'#'; 60], 15), 35);
    }

    #[test]
    fn codes_cover_case_and_iupac() {
        let codes: Vec<u8> = b"ACGTacgtNnRY-.".iter().map(|&b| base_code(b)).collect();
        assert_eq!(codes, [0, 1, 2, 3, 0, 1, 2, 3, 4, 4, 4, 4, 4, 4]);
    }
}
