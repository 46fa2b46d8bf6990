//! `bcuda-dev no-hit`: how many reads a proof of "no alignment within `max_diff` edits" would
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

use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda::aln_options::{cal_maxdiff, AVG_ERR};
use bcuda::reads::{ReadBatchReader, ReadOptions};
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
    /// bwa's `.sai` of the same reads: every read the proof answers must have no hit there.
    #[arg(long)]
    pub sai: Option<PathBuf>,
    /// Write the numbers (from 0, in file order) of the reads left to bwa's search here.
    #[arg(long)]
    pub left: Option<PathBuf>,
    /// Lookups a read's proof may take before it gives the read up to bwa's search.
    #[arg(long, default_value_t = 100_000)]
    pub budget: u64,
}

/// bwa's bidirectional interval: rows of the string (`fwd`), of its reverse complement
/// (`rev`), and how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BiInterval {
    pub fwd: u64,
    pub rev: u64,
    pub size: u64,
}

/// The interval of the one-base string `c`.
pub fn base_interval(bwt: &Bwt, c: u8) -> BiInterval {
    let l2 = bwt.l2();
    let c = c as usize;
    BiInterval { fwd: l2[c] + 1, rev: l2[3 - c] + 1, size: l2[c + 1] - l2[c] }
}

/// The four extensions of `ik` by one base (bwa-mem's bwt_extend): prepended (`back`), where
/// entry c is c·W, or appended, where entry c is W·(3-c).
fn extend(bwt: &Bwt, ik: &BiInterval, back: bool, lookups: &mut u64) -> [BiInterval; 4] {
    let l2 = bwt.l2();
    let searched = if back { ik.fwd } else { ik.rev };
    let other = if back { ik.rev } else { ik.fwd };
    let (tk, tl) = bwt.occ4_pair(searched.wrapping_sub(1), searched - 1 + ik.size);
    *lookups += 2;
    let mut out = [BiInterval { fwd: 0, rev: 0, size: 0 }; 4];
    let holds_primary = searched <= bwt.primary() && searched + ik.size > bwt.primary();
    let mut next = other + holds_primary as u64;
    for c in (0..4).rev() {
        let searched_c = l2[c] + 1 + tk[c];
        let size = tl[c] - tk[c];
        out[c] = if back {
            BiInterval { fwd: searched_c, rev: next, size }
        } else {
            BiInterval { fwd: next, rev: searched_c, size }
        };
        next += size;
    }
    out
}

/// W·b, or None when it does not occur.
fn append(bwt: &Bwt, ik: &BiInterval, b: u8, lookups: &mut u64) -> Option<BiInterval> {
    let out = extend(bwt, ik, false, lookups)[3 - b as usize];
    (out.size > 0).then_some(out)
}

/// b·W, or None when it does not occur.
pub fn prepend(bwt: &Bwt, ik: &BiInterval, b: u8, lookups: &mut u64) -> Option<BiInterval> {
    let out = extend(bwt, ik, true, lookups)[b as usize];
    (out.size > 0).then_some(out)
}

/// The search for one read: its codes, the edits allowed, the lookups spent, and lower bounds
/// on the edits its suffixes (`after[i]`: read[i..]) and prefixes (`before[i]`: read[..i])
/// need, as bwa's D array bounds its prefixes.
struct Proof<'a> {
    bwt: &'a Bwt,
    read: &'a [u8],
    max_diff: usize,
    lookups: u64,
    budget: u64,
    after: Vec<usize>,
    before: Vec<usize>,
    /// The part of each read position, and each part's first position.
    part: Vec<usize>,
    part_start: Vec<usize>,
}

impl Proof<'_> {
    /// The bounds: the read cut greedily into pieces that each fail to occur by their last base
    /// (from the right end for `after`, from the left for `before`); a part of the read needs
    /// an edit in every such piece it holds whole.
    fn bounds(&mut self) {
        let len = self.read.len();
        self.after = vec![0; len + 1];
        self.before = vec![0; len + 1];
        let mut pieces = 0;
        let mut ik: Option<BiInterval> = None;
        for i in (0..len).rev() {
            ik = self.grown(ik, self.read[i], true);
            if ik.is_none() {
                pieces += 1;
            }
            self.after[i] = pieces;
        }
        pieces = 0;
        ik = None;
        for i in 0..len {
            ik = self.grown(ik, self.read[i], false);
            if ik.is_none() {
                pieces += 1;
            }
            self.before[i + 1] = pieces;
        }
    }

    /// The piece so far grown by base c (prepended or appended); None when it stops occurring.
    fn grown(&mut self, ik: Option<BiInterval>, c: u8, back: bool) -> Option<BiInterval> {
        if c > 3 {
            return None;
        }
        match ik {
            None => Some(base_interval(self.bwt, c)),
            Some(ik) if back => prepend(self.bwt, &ik, c, &mut self.lookups),
            Some(ik) => append(self.bwt, &ik, c, &mut self.lookups),
        }
    }

    /// Whether the read has an alignment within `max_diff` edits to some substring.
    fn aligns(&mut self) -> bool {
        let (len, parts) = (self.read.len(), self.max_diff + 1);
        if len < parts {
            return true;
        }
        self.bounds();
        if self.after[0] > self.max_diff {
            return false;
        }
        self.part_start = (0..parts).map(|j| j * len / parts).collect();
        self.part = (0..len).map(|i| self.part_start.partition_point(|&s| s <= i) - 1).collect();
        // Search j: part j exact, then the parts after it, then those before it, each of which
        // has an edit (an alignment with one of them exact is search i's, which came first).
        (0..parts).any(|j| {
            let (start, end) = (self.part_start[j], if j + 1 < parts { self.part_start[j + 1] } else { len });
            self.exact_part(start, end).is_some_and(|ik| self.right(ik, end, start, 0))
        })
    }

    /// The interval of read[start..end], matched exactly.
    fn exact_part(&mut self, start: usize, end: usize) -> Option<BiInterval> {
        let last = self.read[end - 1];
        if last > 3 {
            return None;
        }
        let mut ik = base_interval(self.bwt, last);
        for &c in self.read[start..end - 1].iter().rev() {
            if c > 3 {
                return None;
            }
            ik = prepend(self.bwt, &ik, c, &mut self.lookups)?;
        }
        Some(ik)
    }

    /// Extends over read[i..] to the right with `used` edits spent, then over read[..start]
    /// to the left.
    fn right(&mut self, ik: BiInterval, i: usize, start: usize, used: usize) -> bool {
        if self.lookups > self.budget {
            return true; // given up: bwa's search decides
        }
        let before = self.before[start].max(self.part.get(start).copied().unwrap_or(0));
        if used + self.after[i] + before > self.max_diff {
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
        if used + self.before[i].max(open) > self.max_diff {
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
        after: Vec::new(),
        before: Vec::new(),
        part: Vec::new(),
        part_start: Vec::new(),
    };
    let found = proof.aligns();
    (found, proof.lookups)
}

pub fn run(args: NoHitArgs) -> Result<()> {
    let bwt = Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let mut answers: Vec<(bool, u64)> = Vec::new();
    loop {
        let batch = reader.next_batch(1 << 16)?;
        if batch.is_empty() {
            break;
        }
        let max_diff = |len: usize| {
            if args.max_diff >= 1.0 {
                args.max_diff as usize
            } else {
                cal_maxdiff(len as i32, AVG_ERR, args.max_diff as f64).max(0) as usize
            }
        };
        answers.par_extend(batch.par_iter().map(|r| aligns_within(&bwt, r.aligned(), max_diff(r.len), args.budget)));
    }
    let proven: Vec<usize> = (0..answers.len()).filter(|&i| !answers[i].0).collect();
    if let Some(path) = &args.left {
        let left: String = (0..answers.len()).filter(|&i| answers[i].0).map(|i| format!("{i}\n")).collect();
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
        let mut l: Vec<u64> = answers.iter().filter(|a| a.0 == found).map(|a| a.1).collect();
        l.sort_unstable();
        let at = |q: f64| l.get(((l.len() as f64 * q) as usize).min(l.len().saturating_sub(1))).copied().unwrap_or(0);
        let mean = l.iter().sum::<u64>() as f64 / l.len().max(1) as f64;
        println!("{what}: {}\t{mean:.0}\t{}\t{}\t{}", l.len(), at(0.5), at(0.9), l.last().copied().unwrap_or(0));
    }
    if args.sai.is_some() {
        println!("every answered read has no hit in the .sai");
    }
    Ok(())
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

    /// Built by appending base by base, an interval's forward rows are backward search's.
    #[test]
    fn appending_gives_backward_searchs_interval() {
        let dir = tempfile::tempdir().unwrap();
        let text: Vec<u8> = (0..5000u64).map(|i| b"ACGT"[((i * 2654435761) >> 7) as usize % 4]).collect();
        let fa = dir.path().join("t.fa");
        std::fs::write(&fa, [b">t\n".as_slice(), &text, b"\n"].concat()).unwrap();
        bcuda_index::build_index(&fa, &fa, bcuda_index::BuildOptions::default()).unwrap();
        let bwt = Bwt::load(&bcuda_index::with_ext(&fa, ".bwt")).unwrap();
        let code = |b: u8| b"ACGT".iter().position(|&x| x == b).unwrap() as u8;
        let mut lookups = 0;
        for start in (0..4900).step_by(97) {
            let w: Vec<u8> = text[start..start + 12].iter().map(|&b| code(b)).collect();
            let mut ik = base_interval(&bwt, w[0]);
            for &c in &w[1..] {
                ik = append(&bwt, &ik, c, &mut lookups).unwrap();
            }
            let (k, l) = bwt.match_exact(&w).unwrap();
            assert_eq!((ik.fwd, ik.fwd + ik.size - 1), (k, l), "at {start}");
            let rc: Vec<u8> = w.iter().rev().map(|&c| 3 - c).collect();
            let (rk, rl) = bwt.match_exact(&rc).unwrap();
            assert_eq!((ik.rev, ik.rev + ik.size - 1), (rk, rl), "reverse complement at {start}");
        }
    }
}
