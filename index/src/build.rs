//! `bwa index` equivalent: FASTA -> `.pac .ann .amb .bwt .sa`, byte-identical to BWA 0.7.17.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::bwt::OCC_INTERVAL;
use crate::chunk_sort::{ChunkSorter, SortError};
use crate::error::{with_ext, IndexError, Result};
use crate::fasta::FastaReader;
use crate::rand48::Rand48;
use crate::refseqs::{format_amb, format_ann, Hole, RefSeq};
use crate::suffix_sort::{self, BwtAndSamples, SortEvent, SA_INTERVAL};
use crate::text::{ForwardBases, PackedText};

/// bwa's fixed seed for the random bases that replace ambiguous ones.
pub const BWA_SEED: u32 = 11;

pub struct BuildOptions {
    /// Memory for one chunk of suffix positions (8 bytes each); with a sorter, for the two
    /// chunks in flight.
    pub sort_budget_bytes: u64,
    /// Called with (stage, fraction done) for progress reports.
    pub progress: Option<Box<dyn FnMut(&str, f64)>>,
    /// Sorts the chunks elsewhere (the GPU): called once the FASTA is packed (so that opening
    /// it overlaps the reading); an error there means the CPU build.
    pub sorter: Option<SorterSource>,
    /// What the sort with a sorter reports: chunks, fallbacks, the time spent.
    pub events: Option<SortEvents>,
}

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

/// A base code of bwa's nst_nt4_table: A C G T (either case) are 0..=3, anything else is ambiguous.
fn nt4(b: u8) -> Option<u8> {
    match b {
        b'A' | b'a' => Some(0),
        b'C' | b'c' => Some(1),
        b'G' | b'g' => Some(2),
        b'T' | b't' => Some(3),
        _ => None,
    }
}

/// Reads the FASTA and packs it: ambiguous bases become runs in `holes` and random bases.
pub fn pack_fasta(path: &Path) -> Result<PackedReference> {
    let mut reader = FastaReader::open(path)?;
    let mut rng = Rand48::new(BWA_SEED as i64);
    let mut forward = ForwardBases::default();
    let mut seqs: Vec<RefSeq> = Vec::new();
    let mut holes: Vec<Hole> = Vec::new();
    let mut names = HashSet::new();
    while let Some(rec) = reader.next_record()? {
        if !names.insert(rec.name.clone()) {
            return Err(IndexError::bad_fasta(path, format!("sequence name '{}' appears twice (record {})", rec.name, seqs.len() + 1)));
        }
        let offset = forward.len();
        let mut n_ambs = 0u32;
        let mut last = 0u8;
        for (i, &b) in rec.seq.iter().enumerate() {
            let code = match nt4(b) {
                Some(c) => c,
                None => {
                    if last == b {
                        holes.last_mut().expect("a run continues a hole").len += 1;
                    } else {
                        holes.push(Hole { offset: offset + i as u64, len: 1, amb: b });
                        n_ambs += 1;
                    }
                    (rng.lrand48() & 3) as u8
                }
            };
            last = b;
            forward.push(code);
        }
        let anno = if rec.comment.is_empty() { "(null)".to_string() } else { rec.comment };
        seqs.push(RefSeq { gi: 0, name: rec.name, anno, offset, len: rec.seq.len() as u64, n_ambs });
    }
    if forward.is_empty() {
        return Err(IndexError::bad_fasta(path, "the sequences are all empty: nothing to index"));
    }
    Ok(PackedReference { forward, seqs, holes })
}

/// Files being written: each goes to a temporary name and is renamed only when all are done.
struct PendingFiles {
    done: Vec<(PathBuf, PathBuf)>,
}

impl PendingFiles {
    fn write(&mut self, target: PathBuf, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<()> {
        let mut tmp = target.as_os_str().to_owned();
        tmp.push(format!(".bcuda-{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let result = File::create(&tmp).and_then(|f| {
            let mut w = BufWriter::with_capacity(1 << 20, f);
            fill(&mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        });
        self.done.push((tmp.clone(), target));
        result.map_err(|e| IndexError::io(&tmp, e))
    }

    fn commit(mut self) -> Result<()> {
        for (tmp, target) in std::mem::take(&mut self.done) {
            std::fs::rename(&tmp, &target).map_err(|e| IndexError::io(&target, e))?;
        }
        Ok(())
    }
}

impl Drop for PendingFiles {
    fn drop(&mut self) {
        for (tmp, _) in &self.done {
            let _ = std::fs::remove_file(tmp);
        }
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
            files.write(with_ext(prefix, ".ann"), |w| w.write_all(format_ann(l_pac, BWA_SEED, &reference.seqs).as_bytes()))?;
            files.write(with_ext(prefix, ".amb"), |w| w.write_all(&format_amb(l_pac, reference.seqs.len(), &reference.holes)))?;
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
