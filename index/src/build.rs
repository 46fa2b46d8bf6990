//! `bwa index` equivalent: FASTA -> `.pac .ann .amb .bwt .sa`, byte-identical to BWA 0.7.17.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use bcuda_output::Output;

use crate::bwt::OCC_INTERVAL;
use crate::chunk_sort::{ChunkSorter, SortError};
use crate::error::{with_ext, IndexError, Result};
use crate::fasta::FastaReader;
use crate::rand48::Rand48;
use crate::refseqs::{format_amb, format_ann, Hole, RefSeq};
use crate::suffix_sort::{self, BwtAndSamples, SortEvent, SA_INTERVAL};
use crate::text::{ForwardBases, PackedText};
use rayon::prelude::*;

/// bwa's fixed seed for the random bases that replace ambiguous ones.
pub const BWA_SEED: u32 = 11;

pub struct BuildOptions {
    /// Memory for one chunk of suffix positions (8 bytes each); with a sorter, for the three
    /// chunks in flight.
    pub sort_budget_bytes: u64,
    /// Called with (stage, fraction done) for progress reports.
    pub progress: Option<BuildProgress>,
    /// Sorts the chunks elsewhere (the GPU): called once the FASTA is packed (so that opening
    /// it overlaps the reading); an error there means the CPU build.
    pub sorter: Option<SorterSource>,
    /// What the sort with a sorter reports: chunks, fallbacks, the time spent.
    pub events: Option<SortEvents>,
}

/// Receives (stage, fraction done) as the build goes.
pub type BuildProgress = Box<dyn FnMut(&str, f64)>;

/// Receives the events of a build with a sorter.
pub type SortEvents = Box<dyn FnMut(&SortEvent)>;

/// Gives the chunk sorter when the build needs it (see [`BuildOptions::sorter`]).
pub type SorterSource = Box<dyn FnOnce() -> std::result::Result<Box<dyn ChunkSorter>, SortError> + Send>;

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { sort_budget_bytes: 2 << 30, progress: None, sorter: None, events: None }
    }
}

/// The reference as bwa packs it.
pub struct PackedReference {
    pub forward: ForwardBases,
    pub seqs: Vec<RefSeq>,
    pub holes: Vec<Hole>,
}

/// bwa's nst_nt4_table: A C G T (either case) are 0..=3, anything else (4) is ambiguous.
const NT4: [u8; 256] = {
    let mut t = [4u8; 256];
    let (mut i, bases) = (0, *b"ACGT");
    while i < 4 {
        t[bases[i] as usize] = i as u8;
        t[bases[i].to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    t
};

/// Sequence bytes the reading thread hands on at a time (two batches are in memory at once:
/// one being read, one being packed), and the most records it starts per batch.
const BATCH_BYTES: usize = 32 << 20;
const BATCH_RECORDS: usize = 1 << 16;
/// Sequence bytes one task packs (a multiple of 4, so that tasks write whole bytes apart).
const PIECE_BYTES: usize = 1 << 20;

/// Sequence bytes of the FASTA in input order, as one reading thread hands them on.
struct Batch {
    bytes: Vec<u8>,
    /// Records whose bases start in this batch: (offset in `bytes`, name, comment). Bases
    /// before the first belong to the record that the previous batch ended in.
    starts: Vec<(usize, String, String)>,
    /// Whether the batch's last record ends in it (all its bases are here or earlier).
    last_ends: bool,
}

/// A record of the reference whose bases are being packed.
struct Open {
    name: String,
    comment: String,
    offset: u64,
}

/// Reads the FASTA and packs it: ambiguous bases become runs in `holes` and random bases.
///
/// As bwa's bntseq (bns_fasta2bntseq): every byte that is not A, C, G or T (either case)
/// takes the next `lrand48() & 3` (one stream, seeded with 11, one draw per such byte in input
/// order), and a run of one ambiguous byte within a record is one hole (the byte before a
/// record's first base counts as 0, so a record starting with a 0 byte continues the last
/// hole, as bwa's). A thread reads and splits the lines while the batch before is packed in
/// parallel: each piece knows how many ambiguous bytes precede it, and its generator jumps
/// there ([`Rand48::skip`]); its holes are joined to the ones before in order.
pub fn pack_fasta(path: &Path) -> Result<PackedReference> {
    pack_fasta_sized(path, BATCH_BYTES, PIECE_BYTES)
}

/// [`pack_fasta`] with batches of `batch_bytes` and pieces of `piece_bytes` (a multiple of 4;
/// tests make them tiny).
fn pack_fasta_sized(path: &Path, batch_bytes: usize, piece_bytes: usize) -> Result<PackedReference> {
    assert!(piece_bytes > 0 && piece_bytes.is_multiple_of(4) && batch_bytes > 0);
    let mut reader = FastaReader::open(path)?;
    let stdin = crate::fasta::is_stdin(path);
    let mut forward = ForwardBases::default();
    // A plain file holds at most its size in bases (read in pieces, growing the packed bases
    // could otherwise copy them with twice their size allocated).
    if let Some(len) = std::fs::metadata(path).ok().filter(|_| !stdin).map(|m| m.len()) {
        let mut magic = [0u8; 2];
        let gzip = File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
            && magic == [0x1f, 0x8b];
        if !gzip {
            forward.reserve(len);
        }
    }
    let (batch_tx, batch_rx) = std::sync::mpsc::sync_channel::<Result<Batch>>(1);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    // Messages name `-` as standard input.
    let path = if stdin { Path::new("standard input") } else { path };
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut in_record = false;
            loop {
                let bytes = match free_rx.try_recv() {
                    Ok(mut bytes) => {
                        bytes.clear();
                        bytes
                    }
                    Err(_) => Vec::with_capacity(batch_bytes + 1),
                };
                let mut batch = Batch { bytes, starts: Vec::new(), last_ends: false };
                let mut step = || -> Result<bool> {
                    while batch.bytes.len() < batch_bytes && batch.starts.len() < BATCH_RECORDS {
                        if in_record {
                            in_record = !reader.read_bases(&mut batch.bytes, batch_bytes)?;
                            batch.last_ends = !in_record;
                        } else {
                            match reader.next_header()? {
                                Some((name, comment)) => {
                                    batch.starts.push((batch.bytes.len(), name, comment));
                                    (in_record, batch.last_ends) = (true, false);
                                }
                                None => return Ok(true),
                            }
                        }
                    }
                    Ok(false)
                };
                let outcome = step();
                // The bases read before an error are packed first (the errors come in input order).
                if batch_tx.send(Ok(batch)).is_err() {
                    return; // the packing stopped at an error
                }
                match outcome {
                    Ok(false) => {}
                    Ok(true) => return,
                    Err(e) => {
                        let _ = batch_tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let mut packer = Packer {
            piece_bytes,
            forward,
            seqs: Vec::new(),
            holes: Vec::new(),
            names: HashSet::new(),
            open: None,
            drawn: 0,
            last_byte: 0,
            path,
        };
        for batch in batch_rx {
            let batch = batch?;
            packer.pack(&batch)?;
            let _ = free_tx.send(batch.bytes);
        }
        packer.close_record()?;
        let Packer { forward, seqs, holes, .. } = packer;
        if forward.is_empty() {
            return Err(IndexError::bad_fasta(path, "the sequences are all empty: nothing to index"));
        }
        Ok(PackedReference { forward, seqs, holes })
    })
}

/// The packing of the batches, in input order.
struct Packer<'p> {
    piece_bytes: usize,
    forward: ForwardBases,
    seqs: Vec<RefSeq>,
    holes: Vec<Hole>,
    names: HashSet<String>,
    open: Option<Open>,
    /// Random numbers drawn so far (one per ambiguous byte).
    drawn: u64,
    /// The last byte of the open record so far (0 before its first).
    last_byte: u8,
    path: &'p Path,
}

/// What one piece of a batch found: its holes, and how many bytes at its start continue the
/// hole before it (the byte before is the same ambiguous one).
#[derive(Default)]
struct PieceHoles {
    continued: u64,
    holes: Vec<Hole>,
}

impl Packer<'_> {
    /// The open record ends with the bases packed so far.
    fn close_record(&mut self) -> Result<()> {
        self.close_record_at(self.forward.len())
    }

    fn pack(&mut self, batch: &Batch) -> Result<()> {
        let bytes = &batch.bytes[..];
        let first = self.forward.len();
        // Record boundaries in the batch, in order (several at one offset for empty records).
        let resets: Vec<usize> = batch.starts.iter().map(|s| s.0).collect();
        // Pieces: the first from 0, the others from bytes whose base starts a packed byte.
        let align = ((4 - first % 4) % 4) as usize;
        let mut bounds = vec![0usize];
        let mut b = align + self.piece_bytes;
        while b < bytes.len() {
            bounds.push(b);
            b += self.piece_bytes;
        }
        bounds.push(bytes.len());
        let pieces: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        let ambiguous: Vec<u64> =
            pieces.par_iter().map(|&(s, e)| bytes[s..e].iter().map(|&b| (NT4[b as usize] >> 2) as u64).sum()).collect();
        let mut drawn_before = Vec::with_capacity(pieces.len());
        let mut drawn = self.drawn;
        for &a in &ambiguous {
            drawn_before.push(drawn);
            drawn += a;
        }
        // Each piece's packed bytes, apart.
        let out = self.forward.grow(bytes.len() as u64);
        let mut parts = Vec::with_capacity(pieces.len());
        let mut rest = out;
        let mut done = first / 4 * 4;
        for &(_, e) in &pieces {
            let end = (first + e as u64).div_ceil(4) * 4;
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(((end - done) / 4) as usize);
            parts.push(part);
            rest = tail;
            done = end;
        }
        let last_byte = self.last_byte;
        let found: Vec<PieceHoles> = pieces
            .par_iter()
            .zip(parts.into_par_iter())
            .zip(drawn_before.par_iter())
            .map(|((&(s, e), out), &drawn)| {
                let mut rng = Rand48::new(BWA_SEED as i64);
                rng.skip(drawn);
                let before = if s == 0 { last_byte } else { bytes[s - 1] };
                pack_piece(bytes, s, e, first, before, &resets, &mut rng, out)
            })
            .collect();
        self.drawn = drawn;
        // Holes in order; a record's own start (its bases' first byte) comes between them.
        let mut records = batch.starts.iter().peekable();
        let mut take_records_before = |packer: &mut Self, offset: u64| -> Result<()> {
            while let Some((at, name, comment)) = records.next_if(|r| first + r.0 as u64 <= offset) {
                packer.close_record_at(first + *at as u64)?;
                packer.open = Some(Open { name: name.clone(), comment: comment.clone(), offset: first + *at as u64 });
            }
            Ok(())
        };
        for (piece, f) in pieces.iter().zip(found) {
            take_records_before(self, first + piece.0 as u64)?;
            if f.continued > 0 {
                let hole = self.holes.last_mut().ok_or_else(|| {
                    IndexError::bad_fasta(
                        self.path,
                        "a 0 byte starts the sequences, which bwa would count into a run of ambiguous bases before it (there is none)",
                    )
                })?;
                hole.len += f.continued;
            }
            for h in f.holes {
                take_records_before(self, h.offset)?;
                self.holes.push(h);
            }
        }
        take_records_before(self, u64::MAX)?;
        if let Some(&b) = bytes.last() {
            self.last_byte = b;
        }
        if batch.starts.last().is_some_and(|s| s.0 == bytes.len()) {
            self.last_byte = 0;
        }
        if batch.last_ends {
            self.close_record()?;
            self.last_byte = 0;
        }
        Ok(())
    }

    /// Closes the open record, which ends at forward offset `end`: its name is checked and its
    /// line pair of `.ann` made (its holes are all known by then).
    fn close_record_at(&mut self, end: u64) -> Result<()> {
        let Some(rec) = self.open.take() else { return Ok(()) };
        if !self.names.insert(rec.name.clone()) {
            return Err(IndexError::bad_fasta(
                self.path,
                format!("sequence name '{}' appears twice (record {})", rec.name, self.seqs.len() + 1),
            ));
        }
        let n_ambs = self.holes.len() - self.holes.partition_point(|h| h.offset < rec.offset);
        let anno = if rec.comment.is_empty() { "(null)".to_string() } else { rec.comment };
        self.seqs.push(RefSeq {
            gi: 0,
            name: rec.name,
            anno,
            offset: rec.offset,
            len: end - rec.offset,
            n_ambs: n_ambs as u32,
        });
        Ok(())
    }
}

/// Packs bytes `s..e` of a batch whose byte 0 is forward base `first` into `out` (the packed
/// bytes from the one holding base `first + s`), drawing from `rng` for each ambiguous byte;
/// `before` is the byte before `s` in its record and `resets` the offsets where records start.
#[allow(clippy::too_many_arguments)] // one piece of a record: its bytes, place and neighbours, as the caller has them
fn pack_piece(
    bytes: &[u8],
    s: usize,
    e: usize,
    first: u64,
    before: u8,
    resets: &[usize],
    rng: &mut Rand48,
    out: &mut [u8],
) -> PieceHoles {
    let mut found = PieceHoles::default();
    let mut last = before;
    let base0 = (first + s as u64) / 4 * 4;
    let mut next_reset = resets.partition_point(|&r| r < s);
    let mut i = s;
    while i < e {
        // A record starting here: the byte before its first counts as 0 (bwa's `lasts`).
        while next_reset < resets.len() && resets[next_reset] == i {
            last = 0;
            next_reset += 1;
        }
        let stop = if next_reset < resets.len() { resets[next_reset].min(e) } else { e };
        while i < stop {
            let g = first + i as u64;
            // Four unambiguous bytes filling one packed byte: one store.
            if g.is_multiple_of(4) && i + 4 <= stop {
                let c = [
                    NT4[bytes[i] as usize],
                    NT4[bytes[i + 1] as usize],
                    NT4[bytes[i + 2] as usize],
                    NT4[bytes[i + 3] as usize],
                ];
                if (c[0] | c[1] | c[2] | c[3]) < 4 {
                    out[((g - base0) / 4) as usize] = c[0] << 6 | c[1] << 4 | c[2] << 2 | c[3];
                    last = bytes[i + 3];
                    i += 4;
                    continue;
                }
            }
            let b = bytes[i];
            let mut c = NT4[b as usize];
            if c > 3 {
                if last == b {
                    match found.holes.last_mut() {
                        Some(h) => h.len += 1,
                        None => found.continued += 1,
                    }
                } else {
                    found.holes.push(Hole { offset: g, len: 1, amb: b });
                }
                c = (rng.lrand48() & 3) as u8;
            }
            last = b;
            out[((g - base0) / 4) as usize] |= c << ((3 - (g & 3)) * 2);
            i += 1;
        }
    }
    found
}

/// Files being written: each is replaced only when all are done (see `bcuda_output`).
struct PendingFiles {
    done: Vec<Output>,
}

impl PendingFiles {
    fn write(&mut self, target: PathBuf, fill: impl FnOnce(&mut Output) -> std::io::Result<()>) -> Result<()> {
        let mut out = Output::file(&target).map_err(IndexError::Output)?;
        fill(&mut out).map_err(IndexError::Output)?;
        self.done.push(out);
        Ok(())
    }

    fn commit(self) -> Result<()> {
        for out in self.done {
            out.commit().map_err(IndexError::Output)?;
        }
        Ok(())
    }
}

/// Builds the five index files of `fasta` under `prefix` (`prefix.bwt`, ...).
pub fn build_index(fasta: &Path, prefix: &Path, mut opts: BuildOptions) -> Result<()> {
    let mut progress = opts.progress.take();
    let mut report = |stage: &str, f: f64| {
        if let Some(p) = progress.as_mut() {
            p(stage, f)
        }
    };
    report("packing FASTA", 0.0);
    let reference = pack_fasta(fasta)?;
    let l_pac = reference.forward.len();
    let text = PackedText::with_reverse_complement(&reference.forward);
    let n = text.len();
    let counts = text.base_counts();
    let l2 = [0, counts[0], counts[0] + counts[1], counts[0] + counts[1] + counts[2], n];

    report("sorting suffixes", 0.0);
    let fraction = |rows: u64| rows as f64 / (n + 1) as f64;
    // The reference's files are written while the suffixes are sorted.
    let (sorted, files) = std::thread::scope(|s| {
        let writing = s.spawn(|| {
            let mut files = PendingFiles { done: Vec::new() };
            files.write(with_ext(prefix, ".pac"), |w| reference.forward.write_pac(w))?;
            files.write(with_ext(prefix, ".ann"), |w| {
                w.write_all(format_ann(l_pac, BWA_SEED, &reference.seqs).as_bytes())
            })?;
            files.write(with_ext(prefix, ".amb"), |w| {
                w.write_all(&format_amb(l_pac, reference.seqs.len(), &reference.holes))
            })?;
            Ok::<_, IndexError>(files)
        });
        let sorter = opts.sorter.take().map(|source| source());
        let sorted = match sorter {
            Some(Ok(sorter)) => {
                let mut events = opts.events.take();
                suffix_sort::build_with_sorter(&text, opts.sort_budget_bytes, sorter, &mut |e| {
                    if let SortEvent::Chunk(c) = e {
                        report("sorting suffixes", fraction(c.rows_done));
                    }
                    if let Some(events) = events.as_mut() {
                        events(e)
                    }
                })
            }
            other => {
                if let (Some(Err(e)), Some(events)) = (other, opts.events.as_mut()) {
                    events(&SortEvent::Fallback { chunk: None, reason: e.to_string() });
                }
                suffix_sort::build(&text, opts.sort_budget_bytes, |rows| report("sorting suffixes", fraction(rows)))
            }
        };
        (sorted, writing.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    drop(text);
    let mut files = files?;

    report("writing files", 0.0);
    files.write(with_ext(prefix, ".bwt"), |w| write_bwt(w, &sorted, &l2, n))?;
    files.write(with_ext(prefix, ".sa"), |w| write_sa(w, &sorted, &l2, n))?;
    files.commit()?;
    report("done", 1.0);
    Ok(())
}

fn write_u64s(w: &mut impl Write, values: &[u64]) -> std::io::Result<()> {
    for v in values {
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// `.bwt`: primary, L2[1..=4], then per 128 bases the counts so far (4 x u64) and the 8 BWT
/// words, and the final counts (bwa's bwt_bwtupdate_core layout).
fn write_bwt(w: &mut impl Write, s: &BwtAndSamples, l2: &[u64; 5], n: u64) -> std::io::Result<()> {
    write_u64s(w, &[s.primary])?;
    write_u64s(w, &l2[1..])?;
    let mut counts = [0u64; 4];
    let words_per_block = (OCC_INTERVAL / 16) as usize;
    for (block, words) in s.bwt.chunks(words_per_block).enumerate() {
        write_u64s(w, &counts)?;
        for (j, &word) in words.iter().enumerate() {
            w.write_all(&word.to_le_bytes())?;
            let first = (block * words_per_block + j) as u64 * 16;
            if first + 16 <= n {
                add_word_counts(word, &mut counts);
            } else {
                for x in first..n {
                    counts[(word >> ((15 - (x & 15)) * 2) & 3) as usize] += 1;
                }
            }
        }
    }
    write_u64s(w, &counts)
}

/// Adds the counts of the 16 bases of a BWT word.
#[inline]
fn add_word_counts(word: u32, counts: &mut [u64; 4]) {
    const LOW: u32 = 0x5555_5555;
    let (hi, lo) = (word >> 1 & LOW, word & LOW);
    let (c1, c2, c3) = ((!hi & lo & LOW).count_ones(), (hi & !lo & LOW).count_ones(), (hi & lo).count_ones());
    counts[0] += (16 - c1 - c2 - c3) as u64;
    counts[1] += c1 as u64;
    counts[2] += c2 as u64;
    counts[3] += c3 as u64;
}

/// `.sa`: primary, L2[1..=4], interval, length, then the samples of rows 32, 64, ...
fn write_sa(w: &mut impl Write, s: &BwtAndSamples, l2: &[u64; 5], n: u64) -> std::io::Result<()> {
    write_u64s(w, &[s.primary])?;
    write_u64s(w, &l2[1..])?;
    write_u64s(w, &[SA_INTERVAL, n])?;
    write_u64s(w, &s.samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reading and packing as they were before the parallel packing (bwa's order, one
    /// base at a time, lines read whole): the oracle of the tests below.
    /// The packed bytes, the number of bases, the records and the holes.
    type Packed = (Vec<u8>, u64, Vec<RefSeq>, Vec<Hole>);

    fn pack_sequentially(input: &[u8]) -> std::result::Result<Packed, String> {
        let mut lines: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
        lines.reverse();
        let mut rng = Rand48::new(BWA_SEED as i64);
        let mut forward = ForwardBases::default();
        let (mut seqs, mut holes, mut names) = (Vec::<RefSeq>::new(), Vec::<Hole>::new(), HashSet::new());
        let mut header: Option<&[u8]> = None;
        loop {
            if header.is_none() {
                loop {
                    let Some(line) = lines.pop() else {
                        return if seqs.is_empty() && names.is_empty() {
                            Err("empty".into())
                        } else {
                            Ok((forward.bytes().to_vec(), forward.len(), seqs, holes))
                        };
                    };
                    if line[0] == b'>' {
                        header = Some(line);
                        break;
                    }
                    if !line.iter().all(|b| b" \t\n\x0b\x0c\r".contains(b)) {
                        return Err("not FASTA".into());
                    }
                }
            }
            let h = &header.take().unwrap()[1..];
            let end = h.iter().position(|b| b" \t\n\x0b\x0c\r".contains(b)).unwrap_or(h.len());
            let name = String::from_utf8(h[..end].to_vec()).map_err(|_| "name")?;
            let mut comment = Vec::new();
            if end < h.len() && h[end] != b'\n' {
                comment.extend_from_slice(&h[end + 1..]);
                if comment.last() == Some(&b'\n') {
                    comment.pop();
                }
                if comment.len() > 1 && comment.last() == Some(&b'\r') {
                    comment.pop();
                }
            }
            if name.is_empty() {
                return Err("no name".into());
            }
            let comment = String::from_utf8(comment).map_err(|_| "comment")?;
            let mut seq = Vec::new();
            while let Some(line) = lines.pop() {
                match line[0] {
                    b'>' => {
                        header = Some(line);
                        break;
                    }
                    b'\n' => continue,
                    b'@' | b'+' => return Err("FASTQ".into()),
                    _ => {}
                }
                seq.extend_from_slice(line.strip_suffix(b"\n").unwrap_or(line));
                if seq.len() > 1 && seq.last() == Some(&b'\r') {
                    seq.pop();
                }
            }
            if !names.insert(name.clone()) {
                return Err("twice".into());
            }
            let offset = forward.len();
            let (mut n_ambs, mut last) = (0, 0u8);
            for (i, &b) in seq.iter().enumerate() {
                let mut code = NT4[b as usize];
                if code > 3 {
                    if last == b {
                        holes.last_mut().ok_or("0 byte")?.len += 1;
                    } else {
                        holes.push(Hole { offset: offset + i as u64, len: 1, amb: b });
                        n_ambs += 1;
                    }
                    code = (rng.lrand48() & 3) as u8;
                }
                last = b;
                forward.push(code);
            }
            let anno = if comment.is_empty() { "(null)".to_string() } else { comment };
            seqs.push(RefSeq { gi: 0, name, anno, offset, len: seq.len() as u64, n_ambs });
            if header.is_none() && lines.is_empty() {
                return if forward.is_empty() {
                    Err("all empty".into())
                } else {
                    Ok((forward.bytes().to_vec(), forward.len(), seqs, holes))
                };
            }
        }
    }

    /// A random FASTA with what the reader and the packing must get right: N runs over piece
    /// and batch boundaries, IUPAC codes, lowercase, CRLF, lone '\r', blank lines, empty
    /// records, long lines, 0 bytes; now and then a FASTQ line or a name given twice.
    fn random_fasta(seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let mut out = Vec::new();
        let records = 1 + next(6);
        for r in 0..records {
            if next(8) == 0 {
                out.extend_from_slice(b"\n");
            }
            let name = if next(40) == 0 && r > 0 { "r0".to_string() } else { format!("r{r}") };
            out.extend_from_slice(format!(">{name}").as_bytes());
            match next(4) {
                0 => out.extend_from_slice(b" some comment"),
                1 => out.extend_from_slice(b"\tc\r"),
                _ => {}
            }
            out.push(b'\n');
            let lines = next(12);
            for _ in 0..lines {
                let len = [0, 1, 3, 60, 61, 250][next(6) as usize] + next(3);
                let mut i = 0;
                while i < len {
                    let b = match next(20) {
                        0..=9 => b"ACGTacgt"[next(8) as usize],
                        10..=13 => {
                            // A run of one ambiguous byte.
                            let c = b"NnRY-. "[next(7) as usize];
                            let run = 1 + next(40);
                            for _ in 1..run {
                                out.push(c);
                            }
                            i += run - 1;
                            c
                        }
                        14 => b'\r',
                        15 if next(10) == 0 => 0,
                        15 if next(60) == 0 => b'@',
                        _ => b"ACGT"[next(4) as usize],
                    };
                    out.push(b);
                    i += 1;
                }
                match next(6) {
                    0 => out.extend_from_slice(b"\r\n"),
                    1 if next(4) == 0 => out.extend_from_slice(b"\n\n"),
                    _ => out.push(b'\n'),
                }
            }
        }
        if next(3) == 0 && out.last() == Some(&b'\n') {
            out.pop();
        }
        out
    }

    /// The parallel packing with tiny batches and pieces equals the sequential one, on random
    /// FASTA files (and their errors: the same files fail).
    #[test]
    fn parallel_packing_matches_sequential() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.fa");
        let (mut ok, mut failed) = (0, 0);
        for seed in 0..200u64 {
            let fasta = random_fasta(seed);
            std::fs::write(&path, &fasta).unwrap();
            let expected = pack_sequentially(&fasta);
            for (batch, piece) in [(3usize, 4usize), (13, 8), (64, 12), (1000, 16), (1 << 20, 1 << 20)] {
                let got = pack_fasta_sized(&path, batch, piece);
                match (&expected, got) {
                    (Ok((bytes, len, seqs, holes)), Ok(p)) => {
                        assert_eq!(
                            (p.forward.bytes(), p.forward.len()),
                            (&bytes[..], *len),
                            "seed {seed} batch {batch} piece {piece}"
                        );
                        assert_eq!(&p.seqs, seqs, "seed {seed} batch {batch} piece {piece}");
                        assert_eq!(&p.holes, holes, "seed {seed} batch {batch} piece {piece}");
                    }
                    (Err(_), Err(_)) => {}
                    (e, g) => panic!(
                        "seed {seed} batch {batch} piece {piece}: expected {:?}, got {:?}",
                        e.as_ref().err(),
                        g.err().map(|e| e.to_string())
                    ),
                }
            }
            if expected.is_ok() {
                ok += 1;
            } else {
                failed += 1;
            }
        }
        assert!(ok > 100 && failed > 5, "{ok} packed, {failed} refused");
    }
}
