//! The proof that a read has no alignment within its edit limit anywhere in the genome, as the
//! GPU runs it before the inexact search (cuda/no_hit.cu is a port of [`prove`]). bwa's hits
//! are alignments of the whole read within `max_diff` edits (mismatches, gap opens and, in
//! bwa's default mode, gap extensions; see [`edit_limit`]), so a read without one has no hit
//! and its `.sai` record (`n_aln` 0) is known without bwa's search.
//!
//! The read is cut into `limit + 1` parts, one of which any alignment within `limit` edits
//! matches exactly (pigeonhole). Search j matches part j exactly, extends it to the right over
//! the parts after it and then to the left over those before it, each of which must hold an
//! edit (an alignment with one of them exact is an earlier search's), over the bidirectional
//! index that bwa's BWT of both strands already is (bwa-mem's `bwt_extend`), pruned by lower
//! bounds on the edits each suffix and prefix of the read needs (like bwa's D array). An empty
//! search is the proof; an alignment found, a proof over its lookup limit or a full stack
//! leaves the read to bwa's search.
//!
//! `bcuda-dev no-hit` (dev/src/no_hit.rs) holds the recursive form of the same search, the
//! reference: with no limit on lookups or stack, [`prove`] visits the same intervals in the
//! same order (the same answer and lookups). [`prove`] differs from it in what a GPU thread
//! needs: an explicit stack of at most `capacity` entries (a child is pruned by its bounds
//! before it is stacked), and the lookup limit checked when an entry is popped.

use bcuda_index::Bwt;

use crate::sai::{GapOptions, MODE_GAPE};

/// bwa's bidirectional interval: rows of the string (`fwd`), of its reverse complement
/// (`rev`), and how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BiInterval {
    pub fwd: u64,
    pub rev: u64,
    pub size: u64,
}

/// The interval of the one-base string `c` (0..=3).
pub fn base_interval(bwt: &Bwt, c: u8) -> BiInterval {
    let l2 = bwt.l2();
    let c = c as usize;
    BiInterval { fwd: l2[c] + 1, rev: l2[3 - c] + 1, size: l2[c + 1] - l2[c] }
}

/// The four extensions of `ik` by one base (bwa-mem's bwt_extend), two occurrence lookups:
/// prepended (`back`), where entry c is c·W, or appended, where entry c is W·(3-c).
pub fn extend(bwt: &Bwt, ik: &BiInterval, back: bool, lookups: &mut u64) -> [BiInterval; 4] {
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
pub fn append(bwt: &Bwt, ik: &BiInterval, b: u8, lookups: &mut u64) -> Option<BiInterval> {
    let out = extend(bwt, ik, false, lookups)[3 - b as usize];
    (out.size > 0).then_some(out)
}

/// b·W, or None when it does not occur.
pub fn prepend(bwt: &Bwt, ik: &BiInterval, b: u8, lookups: &mut u64) -> Option<BiInterval> {
    let out = extend(bwt, ik, true, lookups)[b as usize];
    (out.size > 0).then_some(out)
}

/// Lower bounds on the edits the read's suffixes (`after[i]`: read[i..]) and prefixes
/// (`before[i]`: read[..i]) need: the read cut greedily into pieces that each fail to occur by
/// their last base (from the right end for `after`, from the left for `before`); a part of the
/// read needs an edit in every such piece it holds whole. Saturated at 255 (the GPU keeps a
/// byte each): they are only compared with edit limits far below.
pub struct Bounds {
    pub after: Vec<u8>,
    pub before: Vec<u8>,
}

/// The read's [`Bounds`] (codes 0..=3, 4 for N, which occurs nowhere).
pub fn bounds(bwt: &Bwt, read: &[u8], lookups: &mut u64) -> Bounds {
    Bounds { after: suffix_bounds(bwt, read, lookups), before: prefix_bounds(bwt, read, lookups) }
}

/// [`Bounds::after`]: the read's pieces from its right end, grown by prepending.
pub fn suffix_bounds(bwt: &Bwt, read: &[u8], lookups: &mut u64) -> Vec<u8> {
    let mut after = vec![0; read.len() + 1];
    let (mut pieces, mut ik) = (0u8, None);
    for i in (0..read.len()).rev() {
        ik = grown(bwt, ik, read[i], true, lookups);
        pieces = pieces.saturating_add(ik.is_none() as u8);
        after[i] = pieces;
    }
    after
}

/// [`Bounds::before`]: the read's pieces from its left end, grown by appending.
pub fn prefix_bounds(bwt: &Bwt, read: &[u8], lookups: &mut u64) -> Vec<u8> {
    let mut before = vec![0; read.len() + 1];
    let (mut pieces, mut ik) = (0u8, None);
    for (i, &c) in read.iter().enumerate() {
        ik = grown(bwt, ik, c, false, lookups);
        pieces = pieces.saturating_add(ik.is_none() as u8);
        before[i + 1] = pieces;
    }
    before
}

/// A piece's interval grown by base `c` (a new piece where `ik` is None), or None where the
/// piece does not occur.
fn grown(bwt: &Bwt, ik: Option<BiInterval>, c: u8, back: bool, lookups: &mut u64) -> Option<BiInterval> {
    match ik {
        _ if c > 3 => None,
        None => Some(base_interval(bwt, c)),
        Some(ik) if back => prepend(bwt, &ik, c, lookups),
        Some(ik) => append(bwt, &ik, c, lookups),
    }
}

/// The first position of part j of a read of `len` bases cut into `parts`.
pub fn part_start(j: usize, len: usize, parts: usize) -> usize {
    j * len / parts
}

/// The part of read position `i` (`i < len`): the last j with `part_start(j) <= i`, i.e. the
/// last j with `j * len < (i + 1) * parts`.
pub fn part_of(i: usize, len: usize, parts: usize) -> usize {
    ((i + 1) * parts - 1) / len
}

/// The interval of read[start..end], matched exactly; None when it does not occur.
pub fn exact_part(bwt: &Bwt, read: &[u8], start: usize, end: usize, lookups: &mut u64) -> Option<BiInterval> {
    let last = read[end - 1];
    if last > 3 {
        return None;
    }
    let mut ik = base_interval(bwt, last);
    for &c in read[start..end - 1].iter().rev() {
        if c > 3 {
            return None;
        }
        ik = prepend(bwt, &ik, c, lookups)?;
    }
    Some(ik)
}

/// The most edits any hit of bwa's for a read with `max_diff` differences allowed may hold
/// under `opt`: `max_diff`, and [`extra_edits`] more.
pub fn edit_limit(max_diff: i32, opt: &GapOptions) -> i32 {
    max_diff + extra_edits(opt)
}

/// Edits bwa's hits may hold beyond a read's `max_diff`: none where gap extensions count
/// against it (bwa's default mode, GAPE); with `-e` they do not, and up to `max_gape` of them
/// come on top.
pub fn extra_edits(opt: &GapOptions) -> i32 {
    if opt.mode & MODE_GAPE != 0 {
        0
    } else {
        opt.max_gape.max(0)
    }
}

/// The most edits a read is proved for (the GPU's stack entries keep edits in 5 bits); a read
/// allowed more is left to bwa's search (cut into so many parts, its proof would find little).
pub const MAX_EDITS: usize = 31;

/// What a proof concluded about a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// No alignment within the limit: bwa has no hit.
    NoAlignment,
    /// An alignment within the limit was found (bwa's search decides).
    Aligns,
    /// Given up after more lookups than allowed, or with a full stack (bwa's search decides).
    OverLookups,
    StackFull,
    /// Not tried: fewer bases than parts, or more edits than [`MAX_EDITS`].
    NotTried,
}

/// A proof's answer, its occurrence lookups and the most entries its stack held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub answer: Answer,
    pub lookups: u64,
    pub peak: usize,
}

/// An interval still to extend from read position `i`, `used` edits spent: to the right
/// (`left` false, over read[i..]) or to the left (over read[..i], `part_edits` of the edits in
/// the part of read[i - 1]).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub ik: BiInterval,
    pub i: usize,
    pub used: usize,
    pub part_edits: usize,
    pub left: bool,
}

/// One read's proof: the read, its limit and bounds, and the search under way (part j from
/// `start`, its stack).
struct Proof<'a> {
    bwt: &'a Bwt,
    read: &'a [u8],
    limit: usize,
    parts: usize,
    bounds: Bounds,
    lookups: u64,
    /// The current search's part, its first position, and the edits the parts before it need
    /// (one each, or the prefix's bound when larger).
    part: usize,
    start: usize,
    before_start: usize,
    stack: Vec<Entry>,
    capacity: usize,
    peak: usize,
}

/// Whether `read` (codes, N as 4) has no alignment within `limit` edits anywhere
/// ([`Answer::NoAlignment`]), with a stack of at most `capacity` entries and giving up once an
/// entry is popped after more than `max_lookups` lookups.
pub fn prove(bwt: &Bwt, read: &[u8], limit: usize, max_lookups: u64, capacity: usize) -> Outcome {
    let (len, parts) = (read.len(), limit + 1);
    if len < parts || limit > MAX_EDITS {
        return Outcome { answer: Answer::NotTried, lookups: 0, peak: 0 };
    }
    let mut lookups = 0;
    let bounds = bounds(bwt, read, &mut lookups);
    let mut p = Proof {
        bwt,
        read,
        limit,
        parts,
        bounds,
        lookups,
        part: 0,
        start: 0,
        before_start: 0,
        stack: Vec::with_capacity(capacity.min(1 << 16)),
        capacity,
        peak: 0,
    };
    let answer = if p.bounds.after[0] as usize > limit { Answer::NoAlignment } else { p.searches(max_lookups) };
    Outcome { answer, lookups: p.lookups, peak: p.peak }
}

impl Proof<'_> {
    /// Search j for j = 0..parts: the first that does not end empty gives the answer.
    fn searches(&mut self, max_lookups: u64) -> Answer {
        let len = self.read.len();
        for j in 0..self.parts {
            let end = if j + 1 < self.parts { part_start(j + 1, len, self.parts) } else { len };
            self.part = j;
            self.start = part_start(j, len, self.parts);
            self.before_start = (self.bounds.before[self.start] as usize).max(j);
            let Some(ik) = exact_part(self.bwt, self.read, self.start, end, &mut self.lookups) else { continue };
            if let Err(answer) = self.run(ik, end, max_lookups) {
                return answer;
            }
        }
        Answer::NoAlignment
    }

    /// One search from part j's interval `ik` (ending at `end`) until its stack is empty.
    fn run(&mut self, ik: BiInterval, end: usize, max_lookups: u64) -> Result<(), Answer> {
        self.push_right(ik, end, 0)?;
        while let Some(e) = self.stack.pop() {
            if self.lookups > max_lookups {
                return Err(Answer::OverLookups);
            }
            if !e.left {
                self.expand_right(e)?;
            } else if e.i == 0 {
                return Err(Answer::Aligns);
            } else {
                self.expand_left(e)?;
            }
        }
        Ok(())
    }

    fn push(&mut self, e: Entry) -> Result<(), Answer> {
        if self.stack.len() == self.capacity {
            return Err(Answer::StackFull);
        }
        self.stack.push(e);
        self.peak = self.peak.max(self.stack.len());
        Ok(())
    }

    /// Stacks `ik` to extend over read[i..] with `used` edits, unless its bounds rule it out;
    /// at the read's end it turns to the left, from the search's part on.
    fn push_right(&mut self, ik: BiInterval, i: usize, used: usize) -> Result<(), Answer> {
        if used + self.bounds.after[i] as usize + self.before_start > self.limit {
            return Ok(());
        }
        if i == self.read.len() {
            return self.push_left(ik, self.start, used, 0);
        }
        self.push(Entry { ik, i, used, part_edits: 0, left: false })
    }

    /// Stacks `ik` to extend over read[..i] with `used` edits, `part_edits` of them in the part
    /// of read[i - 1], unless the bounds rule it out (that part needs an edit, and so does
    /// every part before it).
    fn push_left(&mut self, ik: BiInterval, i: usize, used: usize, part_edits: usize) -> Result<(), Answer> {
        if i > 0 {
            let open = part_of(i - 1, self.read.len(), self.parts) + (part_edits == 0) as usize;
            if used + (self.bounds.before[i] as usize).max(open) > self.limit {
                return Ok(());
            }
        }
        self.push(Entry { ik, i, used, part_edits, left: true })
    }

    /// read[i - 1] taken at `cost` edits, going left; a part it finishes must hold an edit.
    fn consume(&mut self, ik: BiInterval, i: usize, used: usize, part_edits: usize, cost: usize) -> Result<(), Answer> {
        let edits = part_edits + cost;
        let len = self.read.len();
        if part_start(part_of(i - 1, len, self.parts), len, self.parts) != i - 1 {
            self.push_left(ik, i - 1, used + cost, edits)
        } else if edits > 0 {
            self.push_left(ik, i - 1, used + cost, 0)
        } else {
            Ok(())
        }
    }

    /// Stacks the children of a rightward entry, last the one popped first: the read's own
    /// base, then mismatches, reference bases left out of the read (deletions), and the read's
    /// base left out of the reference (an insertion), each in base order.
    fn expand_right(&mut self, e: Entry) -> Result<(), Answer> {
        let children = extend(self.bwt, &e.ik, false, &mut self.lookups);
        let child = |b: u8| Some(children[3 - b as usize]).filter(|c| c.size > 0);
        let base = self.read[e.i];
        if e.used < self.limit {
            self.push_right(e.ik, e.i + 1, e.used + 1)?;
            for b in (0..4u8).rev() {
                if let Some(c) = child(b) {
                    self.push_right(c, e.i, e.used + 1)?;
                }
            }
            for b in (0..4u8).rev().filter(|&b| b != base) {
                if let Some(c) = child(b) {
                    self.push_right(c, e.i + 1, e.used + 1)?;
                }
            }
        }
        match (base < 4).then(|| child(base)).flatten() {
            Some(c) => self.push_right(c, e.i + 1, e.used),
            None => Ok(()),
        }
    }

    /// Stacks the children of a leftward entry, in the order of [`Proof::expand_right`].
    fn expand_left(&mut self, e: Entry) -> Result<(), Answer> {
        let children = extend(self.bwt, &e.ik, true, &mut self.lookups);
        let child = |b: u8| Some(children[b as usize]).filter(|c| c.size > 0);
        let base = self.read[e.i - 1];
        if e.used < self.limit {
            self.consume(e.ik, e.i, e.used, e.part_edits, 1)?;
            for b in (0..4u8).rev() {
                if let Some(c) = child(b) {
                    self.push_left(c, e.i, e.used + 1, e.part_edits + 1)?;
                }
            }
            for b in (0..4u8).rev().filter(|&b| b != base) {
                if let Some(c) = child(b) {
                    self.consume(c, e.i, e.used, e.part_edits, 1)?;
                }
            }
        }
        match (base < 4).then(|| child(base)).flatten() {
            Some(c) => self.consume(c, e.i, e.used, e.part_edits, 0),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::search::seeded::{both_strands, genome_with_repeats, indexed, read_with_edits, xorshift};

    /// A seeded genome of `len` bases with a repeated stretch (codes), indexed in `dir`.
    fn indexed_genome(dir: &std::path::Path, len: usize, next: &mut impl FnMut() -> u64) -> (Vec<u8>, Bwt) {
        let genome = genome_with_repeats(len, 100..400, &[len / 4, len / 2], next);
        let (_, bwt) = indexed(dir, &genome);
        (genome, bwt)
    }

    /// The fewest edits between `read` and any substring of `text` (N in the read matches
    /// nothing): semi-global edit distance.
    fn fewest_edits(read: &[u8], text: &[u8]) -> usize {
        let mut row: Vec<usize> = (0..=read.len()).collect();
        let mut best = row[read.len()];
        for &t in text {
            let mut diag = row[0];
            row[0] = 0;
            for i in 1..=read.len() {
                let here = (diag + (read[i - 1] != t) as usize).min(row[i] + 1).min(row[i - 1] + 1);
                diag = row[i];
                row[i] = here;
            }
            best = best.min(row[read.len()]);
        }
        best
    }

    /// Unbounded, the proof answers exactly: no alignment within the limit if and only if no
    /// substring of either strand is within that many edits; bounded, never a wrong "none".
    #[test]
    fn the_proof_agrees_with_edit_distance_over_both_strands() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (genome, bwt) = indexed_genome(dir.path(), 3000, &mut next);
        let text = both_strands(&genome);
        let (mut none, mut some) = (0, 0);
        for r in 0..240 {
            let len = 12 + (next() % 30) as usize;
            let read = read_with_edits(&text, len, r % 3 == 0, 5, &mut next);
            let edits = fewest_edits(&read, &text);
            for limit in 0..=3 {
                let exact = prove(&bwt, &read, limit, u64::MAX, usize::MAX);
                // Too few bases for a part each: the proof does not try.
                if read.len() > limit {
                    assert_eq!(exact.answer == Answer::NoAlignment, edits > limit, "read {r} {read:?}, limit {limit}");
                }
                none += (exact.answer == Answer::NoAlignment) as usize;
                some += (exact.answer == Answer::Aligns) as usize;
                for (lookups, entries) in [(50, usize::MAX), (u64::MAX, 4), (200, 8)] {
                    let bounded = prove(&bwt, &read, limit, lookups, entries);
                    assert!(bounded.answer != Answer::NoAlignment || edits > limit, "read {r}, limit {limit}");
                    assert!(bounded.peak <= entries);
                }
            }
        }
        assert!(none > 200 && some > 200, "{none} reads proved, {some} aligned");
    }

    /// Built by appending base by base, an interval's forward rows are backward search's, and
    /// its reverse rows those of the reverse complement.
    #[test]
    fn appending_gives_backward_searchs_interval() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (genome, bwt) = indexed_genome(dir.path(), 5000, &mut next);
        let mut lookups = 0;
        for start in (0..4900).step_by(97) {
            let w = &genome[start..start + 12];
            let mut ik = base_interval(&bwt, w[0]);
            for &c in &w[1..] {
                ik = append(&bwt, &ik, c, &mut lookups).unwrap();
            }
            let (k, l) = bwt.match_exact(w).unwrap();
            assert_eq!((ik.fwd, ik.fwd + ik.size - 1), (k, l), "at {start}");
            let rc: Vec<u8> = w.iter().rev().map(|&c| 3 - c).collect();
            let (rk, rl) = bwt.match_exact(&rc).unwrap();
            assert_eq!((ik.rev, ik.rev + ik.size - 1), (rk, rl), "reverse complement at {start}");
        }
    }

    /// The closed form of a position's part is the last part starting at or before it.
    #[test]
    fn a_positions_part_is_the_last_one_starting_at_or_before_it() {
        for len in 1..200 {
            for parts in 1..=len.min(40) {
                let starts: Vec<usize> = (0..parts).map(|j| part_start(j, len, parts)).collect();
                for i in 0..len {
                    assert_eq!(part_of(i, len, parts), starts.partition_point(|&s| s <= i) - 1, "{len} {parts} {i}");
                }
            }
        }
    }

    #[test]
    fn gap_extensions_count_against_max_diff_only_in_bwas_default_mode() {
        let mut opt = GapOptions::default();
        assert_eq!(edit_limit(3, &opt), 3);
        opt.mode &= !MODE_GAPE;
        opt.max_gape = 4;
        assert_eq!(edit_limit(3, &opt), 7);
        opt.max_gape = -1;
        assert_eq!(edit_limit(3, &opt), 3);
    }
}
