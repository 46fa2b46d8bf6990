//! `bcuda-dev no-hit`: how many reads a proof of "no alignment within the edit limit" would
//! answer without bwa's search, and at what cost in occurrence lookups.
//!
//! bwa's hits (in its default mode, where gap extensions count) are alignments of the whole
//! read within `max_diff` edits, narrowed further by the seed, `indel_end_skip` and
//! `max_del_occ`. So a read with no substring of the genome within `max_diff` edits has no
//! hit, and its `.sai` record is known. The proof here: cut the read into `max_diff + 1`
//! parts, one of which any such alignment matches exactly (pigeonhole); find each part's
//! interval, then extend it both ways over the rest of the read, allowing the edits left,
//! over the bidirectional index that bwa's BWT of both strands already is (bwa-mem's
//! `bwt_extend`). An empty search is the proof; an alignment found means "maybe".
//!
//! The search here is the reference, written as recursion; `--entries N` runs instead the form
//! the GPU runs before its inexact search (`bcuda::search::no_hit::prove`, ported by
//! cuda/no_hit.cu): an explicit stack of N entries, the lookups checked at each pop.

use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda::aln_options::{cal_maxdiff, AVG_ERR};
use bcuda::reads::{ReadBatchReader, ReadOptions};
use bcuda::sai::{GapOptions, MODE_GAPE};
use bcuda::search::no_hit::{self, exact_part, extend, Answer, BiInterval, Bounds};
use bcuda_index::Bwt;
use rayon::prelude::*;

#[derive(clap::Args, Debug)]
pub struct NoHitArgs {
    /// Index prefix.
    pub prefix: PathBuf,
    /// Reads (FASTQ or FASTA).
    pub reads: PathBuf,
    /// bwa's -n: maximum differences, or the missing-alignment probability when under 1.
    #[arg(short = 'n', default_value_t = 0.04)]
    pub max_diff: f32,
    /// bwa's -e: gap extensions; given, they no longer count against -n (as in bwa), so the
    /// proof allows this many edits more.
    #[arg(short = 'e')]
    pub max_gape: Option<i32>,
    /// bwa's `.sai` of the same reads: every read the proof answers must have no hit there.
    #[arg(long)]
    pub sai: Option<PathBuf>,
    /// Write the numbers (from 0, in file order) of the reads left to bwa's search here.
    #[arg(long)]
    pub left: Option<PathBuf>,
    /// Lookups a read's proof may take before it gives the read up to bwa's search.
    #[arg(long, default_value_t = 100_000)]
    pub budget: u64,
    /// Prove as the GPU does, with a stack of this many entries (a read that needs more is
    /// left to bwa's search), instead of the recursive reference.
    #[arg(long)]
    pub entries: Option<usize>,
}

/// The search for one read: its codes, the edits allowed, the lookups spent, and lower bounds
/// on the edits its suffixes and prefixes need ([`Bounds`]).
struct Proof<'a> {
    bwt: &'a Bwt,
    read: &'a [u8],
    max_diff: usize,
    lookups: u64,
    budget: u64,
    bounds: Bounds,
    /// The part of each read position, and each part's first position.
    part: Vec<usize>,
    part_start: Vec<usize>,
}

impl Proof<'_> {
    /// Whether the read has an alignment within `max_diff` edits to some substring.
    fn aligns(&mut self) -> bool {
        let (len, parts) = (self.read.len(), self.max_diff + 1);
        if len < parts {
            return true;
        }
        self.bounds = no_hit::bounds(self.bwt, self.read, &mut self.lookups);
        if self.bounds.after[0] as usize > self.max_diff {
            return false;
        }
        self.part_start = (0..parts).map(|j| j * len / parts).collect();
        self.part = (0..len).map(|i| self.part_start.partition_point(|&s| s <= i) - 1).collect();
        // Search j: part j exact, then the parts after it, then those before it, each of which
        // has an edit (an alignment with one of them exact is search i's, which came first).
        (0..parts).any(|j| {
            let (start, end) = (self.part_start[j], if j + 1 < parts { self.part_start[j + 1] } else { len });
            exact_part(self.bwt, self.read, start, end, &mut self.lookups)
                .is_some_and(|ik| self.right(ik, end, start, 0))
        })
    }

    /// Extends over read[i..] to the right with `used` edits spent, then over read[..start]
    /// to the left.
    fn right(&mut self, ik: BiInterval, i: usize, start: usize, used: usize) -> bool {
        if self.lookups > self.budget {
            return true; // given up: bwa's search decides
        }
        let before = (self.bounds.before[start] as usize).max(self.part.get(start).copied().unwrap_or(0));
        if used + self.bounds.after[i] as usize + before > self.max_diff {
            return false;
        }
        if i == self.read.len() {
            return self.left(ik, start, used, 0);
        }
        let children = extend(self.bwt, &ik, false, &mut self.lookups);
        let child = |b: u8| Some(children[3 - b as usize]).filter(|c| c.size > 0);
        let base = self.read[i];
        // The read's own base first (an alignment, if any, is found soonest), then the others.
        if base < 4 && child(base).is_some_and(|c| self.right(c, i + 1, start, used)) {
            return true;
        }
        if used == self.max_diff {
            return false;
        }
        // A mismatch, a reference base left out of the read (a deletion), or the read's base
        // left out of the reference (an insertion): one edit each.
        (0..4u8).filter(|&b| b != base).any(|b| child(b).is_some_and(|c| self.right(c, i + 1, start, used + 1)))
            || (0..4u8).any(|b| child(b).is_some_and(|c| self.right(c, i, start, used + 1)))
            || self.right(ik, i + 1, start, used + 1)
    }

    /// Extends over read[..i] to the left with `used` edits spent, `part_edits` of them in the
    /// part of read[i - 1] (a deletion between two bases counts to the left one's part).
    fn left(&mut self, ik: BiInterval, i: usize, used: usize, part_edits: usize) -> bool {
        if i == 0 || self.lookups > self.budget {
            return true;
        }
        let open = self.part[i - 1] + (part_edits == 0) as usize;
        if used + (self.bounds.before[i] as usize).max(open) > self.max_diff {
            return false;
        }
        let children = extend(self.bwt, &ik, true, &mut self.lookups);
        let child = |b: u8| Some(children[b as usize]).filter(|c| c.size > 0);
        let base = self.read[i - 1];
        if base < 4 && child(base).is_some_and(|c| self.consume(c, i, used, part_edits, 0)) {
            return true;
        }
        if used == self.max_diff {
            return false;
        }
        (0..4u8).filter(|&b| b != base).any(|b| child(b).is_some_and(|c| self.consume(c, i, used, part_edits, 1)))
            || (0..4u8).any(|b| child(b).is_some_and(|c| self.left(c, i, used + 1, part_edits + 1)))
            || self.consume(ik, i, used, part_edits, 1)
    }

    /// read[i - 1] taken at `cost`; a part it finishes must hold an edit.
    fn consume(&mut self, ik: BiInterval, i: usize, used: usize, part_edits: usize, cost: usize) -> bool {
        let edits = part_edits + cost;
        if self.part_start[self.part[i - 1]] == i - 1 {
            edits > 0 && self.left(ik, i - 1, used + cost, 0)
        } else {
            self.left(ik, i - 1, used + cost, edits)
        }
    }
}

/// Whether `read` (codes, N as 4) may align within `max_diff` edits somewhere (false: it does
/// not; true: it does, or the proof gave up after `budget` lookups), and the lookups taken.
pub fn aligns_within(bwt: &Bwt, read: &[u8], max_diff: usize, budget: u64) -> (bool, u64) {
    let mut proof = Proof {
        bwt,
        read,
        max_diff,
        lookups: 0,
        budget,
        bounds: Bounds { after: Vec::new(), before: Vec::new() },
        part: Vec::new(),
        part_start: Vec::new(),
    };
    let found = proof.aligns();
    (found, proof.lookups)
}

/// One read's proof: whether it may align (an alignment found, or given up), its lookups,
/// and with `--entries` the most entries its stack held and whether it filled.
struct ReadProof {
    aligns: bool,
    lookups: u64,
    peak: usize,
    stack_full: bool,
}

/// The proof of `read` with `limit` edits: the reference, or with `entries` the GPU's form.
fn prove(bwt: &Bwt, read: &[u8], limit: usize, args: &NoHitArgs) -> ReadProof {
    match args.entries {
        None => {
            let (aligns, lookups) = aligns_within(bwt, read, limit, args.budget);
            ReadProof { aligns, lookups, peak: 0, stack_full: false }
        }
        Some(entries) => {
            let out = no_hit::prove(bwt, read, limit, args.budget, entries);
            ReadProof {
                aligns: out.answer != Answer::NoAlignment,
                lookups: out.lookups,
                peak: out.peak,
                stack_full: out.answer == Answer::StackFull,
            }
        }
    }
}

/// The edits a read of `len` bases may hold in bwa's hits under `-n` and `-e`.
fn read_limit(args: &NoHitArgs, len: usize) -> usize {
    let max_diff = if args.max_diff >= 1.0 {
        args.max_diff as i32
    } else {
        cal_maxdiff(len as i32, AVG_ERR, args.max_diff as f64)
    };
    let mut opt = GapOptions::default();
    if let Some(e) = args.max_gape {
        opt.mode &= !MODE_GAPE;
        opt.max_gape = e;
    }
    no_hit::edit_limit(max_diff, &opt).max(0) as usize
}

pub fn run(args: NoHitArgs) -> Result<()> {
    let bwt = Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let mut answers: Vec<ReadProof> = Vec::new();
    loop {
        let batch = reader.next_batch(1 << 16)?;
        if batch.is_empty() {
            break;
        }
        answers.par_extend(batch.par_iter().map(|r| prove(&bwt, r.aligned(), read_limit(&args, r.len), &args)));
    }
    let proven: Vec<usize> = (0..answers.len()).filter(|&i| !answers[i].aligns).collect();
    if let Some(path) = &args.left {
        let left: String = (0..answers.len()).filter(|&i| answers[i].aligns).map(|i| format!("{i}\n")).collect();
        std::fs::write(path, left)?;
    }
    if let Some(sai) = &args.sai {
        check_against_sai(sai, &proven)?;
    }
    println!("reads\t{}", answers.len());
    println!("reads\tlookups: mean\tmedian\t90th percentile\tmaximum");
    for (what, found) in [
        ("no alignment within max_diff (answered)", false),
        ("an alignment found, or given up (bwa's search needed)", true),
    ] {
        let l: Vec<u64> = answers.iter().filter(|a| a.aligns == found).map(|a| a.lookups).collect();
        println!("{what}: {}", spread(l));
    }
    if let Some(entries) = args.entries {
        let full = answers.iter().filter(|a| a.stack_full).count();
        let peaks = spread(answers.iter().map(|a| a.peak as u64).collect());
        println!("stack of {entries} entries: {full} reads filled it; peak entries per read: {peaks}");
    }
    if args.sai.is_some() {
        println!("every answered read has no hit in the .sai");
    }
    Ok(())
}

/// How many values, then their mean, median, 90th percentile and maximum, tab-separated.
fn spread(mut v: Vec<u64>) -> String {
    v.sort_unstable();
    let at = |q: f64| v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1))).copied().unwrap_or(0);
    let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
    format!("{}\t{mean:.0}\t{}\t{}\t{}", v.len(), at(0.5), at(0.9), v.last().copied().unwrap_or(0))
}

/// Every read in `proven` (indexes in the file) has no hit in `sai`.
fn check_against_sai(sai: &std::path::Path, proven: &[usize]) -> Result<()> {
    let mut reader = bcuda::sai::open(sai)?;
    let mut next = proven.iter().peekable();
    let mut i = 0usize;
    while let Some(hits) = reader.next_read()? {
        if next.peek() == Some(&&i) {
            next.next();
            if !hits.is_empty() {
                bail!("read {i}: no alignment within max_diff edits, but bwa has {} hits", hits.len());
            }
        }
        i += 1;
    }
    if next.peek().is_some() {
        bail!("{}: fewer reads than the read file", sai.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};

    /// With no limit on lookups or stack, the GPU's form visits the reference's intervals in
    /// its order: the same answer and the same lookups for every read and edit limit.
    #[test]
    fn the_gpus_form_unbounded_is_the_reference() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let genome = genome_with_repeats(8000, 100..400, &[2000, 4000, 6000], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        let mut compared = 0;
        for r in 0..300 {
            let len = 20 + (next() % 40) as usize;
            let read = read_with_edits(&genome, len, r % 3 == 0, 4, &mut next);
            for limit in 0..=4 {
                let (aligns, lookups) = aligns_within(&bwt, &read, limit, u64::MAX);
                let gpu = no_hit::prove(&bwt, &read, limit, u64::MAX, usize::MAX);
                assert_eq!(
                    (gpu.answer != Answer::NoAlignment, gpu.lookups),
                    (aligns, lookups),
                    "read {r}, limit {limit}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 1500);
    }
}
