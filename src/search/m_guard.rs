//! A bound on bwa's `-m` count for a search bounded from the start (`bcuda-dev prune-bound`;
//! docs/gpu-search.md, "The `-m` guard").
//!
//! bwa's search stops when its stack holds more than `-m` entries. A search started with
//! `g = d* + 1` pops a subsequence of bwa's pops, so where bwa's stack provably stays under
//! `-m` the bounded search's hits are bwa's. The bound comes from the bounded search alone:
//!
//! - Every pop adds at most 8 entries (9 children less itself), so bwa's stack never holds
//!   more than `1 + 8 x` its pops that push.
//! - bwa's pops are the bounded search's pops and the entries only bwa pushes and their
//!   descendants. Those are born at the pops both searches make before the first hit (after
//!   it both run with the same bound and D array): the children bwa's step pushes there with
//!   the full limit and the bounded one's does not, the *entry points*. Both steps read the
//!   same occurrence counts, so a GPU kernel would have them at no lookup.
//! - An entry point's descendants that push are bounded without lookups, position by
//!   position: a chain of matching children down from read position `i` to `i'` needs the
//!   read's bases `i'..i` to occur in the genome, which they do not once they hold a whole
//!   block of the D array that did not occur ([`chain_floor`]); each chain node has at most 3
//!   mismatching children (4 at an N), each the start of such a chain with one more mismatch;
//!   the strings alive at a position number no more than a block prefix of a D array below
//!   their mismatches occurs (`occurrence_caps`); entries that score more than the last
//!   score bwa pops (`best + s_mm`), and those whose differences leave nothing to push, push
//!   nothing.
//!
//! It applies where gap entries pop, if at all, only as chains of one gap open (its other
//! children, and a second gap, cost more than `best + s_mm`).
//!
//! The bound reads the entry points only as counters ([`EntryCounts`]), which a search kernel
//! can keep at its pops. The team passes' rungs (src/gpu/rungs.rs, a test hook) keep those of one
//! and two mismatches and compute [`kernel_bounds`]' second form for a best hit of two mismatches
//! (cuda/m_guard.cuh), then, where that is over `-m`, [`counted_bound`]'s second stage with the
//! further D arrays (cuda/rung_guard.cu); the first GPU port of the whole guard was slower than
//! bwa's search and was taken out (f4825f2 holds it).

use super::stack::Entry;
use super::{cal_width, Search, Step, Width};
use crate::sai::{AlnHit, GapOptions, MODE_GAPE, MODE_NONSTOP};

/// Watches the bounded search's pops before its first hit and keeps the entry points.
pub struct GuardWatch<'a> {
    search: &'a Search<'a>,
    /// The read's D array as computed (bwa changes it only at hits).
    fresh: &'a [Width],
    full: i32,
    g: i32,
    pub entry_points: Vec<Entry>,
    /// A pop one step found a hit at and the other did not (the theory says never).
    pub inconsistent: bool,
    /// Pops with entry points, and those of them where the bounded step ends before it loads
    /// the pop's extensions (its limit leaves the entry nothing, or less than the D array's
    /// bid): a kernel counting the entry points from the extensions it loaded needs a lookup
    /// more there (and at most at every pop with entry points, where a step loads only the
    /// matching base's counts).
    pub pops_with_entry_points: usize,
    pub extension_loads: usize,
}

impl<'a> GuardWatch<'a> {
    pub fn new(search: &'a Search<'a>, fresh: &'a [Width], full: i32, g: i32) -> GuardWatch<'a> {
        GuardWatch {
            search,
            fresh,
            full,
            g,
            entry_points: Vec::new(),
            inconsistent: false,
            pops_with_entry_points: 0,
            extension_loads: 0,
        }
    }

    /// Entry `e`, popped before the first hit: the children bwa pushes that the bounded
    /// search does not.
    pub fn watch(&mut self, e: &Entry) {
        let (bwa, bwa_hit) = self.children(e, self.full);
        let (bounded, bounded_hit) = self.children(e, self.g);
        self.inconsistent |= bwa_hit != bounded_hit;
        let before = self.entry_points.len();
        self.entry_points.extend(bwa.into_iter().filter(|c| !bounded.contains(c)));
        if self.entry_points.len() > before {
            self.pops_with_entry_points += 1;
            self.extension_loads += self.ends_unloaded(e) as usize;
        }
    }

    /// Whether the bounded step ends at `e` before loading its extensions: its differences
    /// left are fewer than none, or than the D array's bid below it (bwa's step and the
    /// kernel's `step` both stop there).
    fn ends_unloaded(&self, e: &Entry) -> bool {
        let gape = if self.search.opt.mode & MODE_GAPE != 0 { e.n_gape as i32 } else { 0 };
        let m = self.g - (e.n_mm as i32 + e.n_gapo as i32 + gape);
        let i = position(e);
        m < 0 || (i > 0 && m < self.fresh[i - 1].bid)
    }

    /// The children `e` pushes (its matching child too) with `max_diff`, and whether it is a hit.
    fn children(&self, e: &Entry, max_diff: i32) -> (Vec<Entry>, bool) {
        let mut kids = Vec::new();
        let step = self.search.step(e, max_diff, self.fresh, &mut |c| kids.push(c));
        match step {
            Step::Expanded(Some(m)) => kids.push(m),
            Step::Hit(..) => return (kids, true),
            Step::Expanded(None) | Step::Done => {}
        }
        (kids, false)
    }

    /// The entry points as counters ([`EntryCounts`]).
    pub fn counts(&self) -> EntryCounts {
        EntryCounts::of(&self.entry_points, self.search.seq.len(), self.full)
    }
}

/// The guard's answer on one read.
pub struct GuardBound {
    /// The most entries bwa's stack can hold.
    pub entries: u64,
    /// Occurrence lookups spent on D arrays from other starts (only where bwa's own two did
    /// not prove the read).
    pub lookups: u64,
}

/// Positions apart of the starts of the further D arrays ([`stack_bound`]).
pub const FURTHER_STARTS: usize = 8;

/// A D array (bwt_cal_width's widths) of the read's bases from a read position on: the
/// position, and one width a base.
pub type DArray<'a> = (usize, &'a [Width]);

/// The kinds of gap chains [`EntryCounts`] counts apart (its `gap` rows).
pub const INSERTION: usize = 0;
pub const DELETION: usize = 1;

/// A read's entry points as the bound reads them: counts by kind and position, and a score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryCounts {
    /// The read's length and its full `max_diff`.
    pub len: usize,
    pub full: i32,
    /// Entry points of mismatches only: `mm[n * (len + 1) + p]` of `n` mismatches at read
    /// position `p`, `n` from 0 to `full`.
    pub mm: Vec<u32>,
    /// Entry points of one gap open and nothing else, the heads of gap chains:
    /// `gap[kind * (len + 1) + p]`, `kind` [`INSERTION`] or [`DELETION`]. Each scores
    /// `s_gapo`.
    pub gap: Vec<u32>,
    /// The lowest score of the other gap entry points (`u32::MAX`: none). Only whether one of
    /// them pops matters: then the bound does not apply.
    pub other_gap_score: u32,
}

impl EntryCounts {
    pub fn new(len: usize, full: i32) -> EntryCounts {
        let levels = full.max(0) as usize + 1;
        EntryCounts {
            len,
            full,
            mm: vec![0; levels * (len + 1)],
            gap: vec![0; 2 * (len + 1)],
            other_gap_score: u32::MAX,
        }
    }

    pub fn of(entry_points: &[Entry], len: usize, full: i32) -> EntryCounts {
        let mut counts = EntryCounts::new(len, full);
        for e in entry_points {
            counts.count(e);
        }
        counts
    }

    /// Counts entry point `e`. No entry point has more than `full` mismatches (bwa's step
    /// pushes within the full limit); one that had would not count.
    pub fn count(&mut self, e: &Entry) {
        let (p, row) = (position(e), self.len + 1);
        assert!(p <= self.len, "an entry point past the read's start");
        if e.n_gapo == 0 && e.n_gape == 0 {
            if e.n_mm as i32 <= self.full {
                self.mm[e.n_mm as usize * row + p] += 1;
            }
        } else if e.n_mm == 0 && e.n_gapo == 1 && e.n_gape == 0 {
            let kind = if e.n_del > 0 { DELETION } else { INSERTION };
            self.gap[kind * row + p] += 1;
        } else {
            self.other_gap_score = self.other_gap_score.min(e.score() as u32);
        }
    }

    /// The entry points of `n` mismatches, by position.
    fn mismatches(&self, n: usize) -> &[u32] {
        &self.mm[n * (self.len + 1)..][..self.len + 1]
    }

    /// The heads of gap chains of `kind`, by position.
    fn chains(&self, kind: usize) -> &[u32] {
        &self.gap[kind * (self.len + 1)..][..self.len + 1]
    }
}

/// What the guard reads of a read besides its D arrays: the read as the search sees it, its
/// entry points, and what the bounded search found (its pops, its best hit's score, and d*).
pub struct GuardRead<'a> {
    pub seq: &'a [u8],
    pub counts: &'a EntryCounts,
    pub bounded_pops: u64,
    pub best_score: i32,
    pub d_star: i32,
}

impl<'a> GuardRead<'a> {
    /// The read `watch` watched, its entry points `counts`, and what its bounded search found.
    fn watched(
        watch: &GuardWatch<'a>,
        counts: &'a EntryCounts,
        bounded_pops: usize,
        best: &AlnHit,
        d_star: i32,
    ) -> Self {
        GuardRead {
            seq: watch.search.seq,
            counts,
            bounded_pops: bounded_pops as u64,
            best_score: best.score as i32,
            d_star,
        }
    }
}

/// What bwa's stack can hold at most: `None` where the bound does not apply (`-N`, gap
/// entries that pop other than as chains of one gap), else `1 + 8 x` the pushing pops
/// (`bounded_pops` and the entry points' descendants, `extra_pops`). When bwa's D arrays (the
/// read's and the seed's) leave the bound over `-m`, D arrays started every [`FURTHER_STARTS`]
/// positions cap it too, at a lookup a base.
pub fn stack_bound(
    watch: &GuardWatch,
    bounded_pops: usize,
    best: &AlnHit,
    d_star: i32,
    opt: &GapOptions,
) -> Option<GuardBound> {
    if watch.inconsistent {
        return None;
    }
    let counts = watch.counts();
    let read = GuardRead::watched(watch, &counts, bounded_pops, best, d_star);
    counted_bound(&read, &bwa_d_arrays(watch), || further_d_arrays(watch), opt)
}

/// Two cheaper forms of [`stack_bound`] for a search kernel, from the same counters: with
/// chain floors alone (where no string of fewer mismatches than d* pushes, as at bwa's
/// penalties for a best hit of two mismatches, each entry point at position `p` heads one
/// chain, so the bound is `1 + 8 x` the pushing pops plus `p - floor(p) + 1` for each: one sum
/// a read kept as it goes), and with the occurrence caps of bwa's own two D arrays but no
/// further ones (no lookup: a kernel after the search, from the counters and the D arrays the
/// search already has).
///
/// The third form, [`peak_bound`], takes the bounded search's own stack peak (`bounded_peak`,
/// as `-m` counts it) in place of `8 x` its pops.
pub fn kernel_bounds(
    watch: &GuardWatch,
    (bounded_pops, bounded_peak): (usize, usize),
    best: &AlnHit,
    d_star: i32,
    opt: &GapOptions,
) -> KernelBounds {
    if watch.inconsistent {
        return KernelBounds::default();
    }
    let counts = watch.counts();
    let read = GuardRead::watched(watch, &counts, bounded_pops, best, d_star);
    let d_arrays = bwa_d_arrays(watch);
    let extra = extra_pops_within(&read, &d_arrays, opt, true);
    KernelBounds {
        floors: bound_with(&read, &d_arrays[..1], opt, false),
        bwa_caps: extra.map(|x| pops_bound(read.bounded_pops, x)),
        peak: extra.map(|x| {
            let peak = peak_bound(bounded_peak as u64, watch.pops_with_entry_points as u64, x);
            peak.min(pops_bound(read.bounded_pops, x))
        }),
    }
}

/// [`kernel_bounds`]' answers (None where the bound does not apply).
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelBounds {
    pub floors: Option<u64>,
    pub bwa_caps: Option<u64>,
    pub peak: Option<u64>,
}

/// bwa's stack holds its entries after its pops: `1 +` the sum over them of their children
/// less one, at most 8 a pop. The bounded search's pops are bwa's, with bwa's children less
/// the entry points, and `extra` bounds the pushing pops of the entry points' descendants.
fn pops_bound(bounded_pops: u64, extra: u64) -> u64 {
    1u64.saturating_add(bounded_pops.saturating_add(extra).saturating_mul(8))
}

/// The same sum split three ways: over the bounded search's pops with its own children (its
/// stack, as `-m` counts it, which never held more than `bounded_peak`), the entry points (at
/// most 9 at each of the `pops_with_entry_points` pops that have any: a pop's children), and
/// the descendants' pops (8 each). bwa's stack after any of its pops is so bounded, as the
/// bounded search's pops before it are a prefix of its own. [`kernel_bounds`] takes the lesser
/// of this and [`pops_bound`].
pub fn peak_bound(bounded_peak: u64, pops_with_entry_points: u64, extra: u64) -> u64 {
    let born = pops_with_entry_points.saturating_mul(9);
    bounded_peak.saturating_add(born).saturating_add(extra.saturating_mul(8))
}

/// [`stack_bound`] from the counters: the bound with bwa's D arrays, and where that is over
/// `-m`, with the D arrays `further` gives too.
pub fn counted_bound(
    read: &GuardRead,
    bwa: &[DArray],
    further: impl FnOnce() -> Vec<(usize, Vec<Width>)>,
    opt: &GapOptions,
) -> Option<GuardBound> {
    let entries = entries_bound(read, bwa, opt)?;
    if entries <= opt.max_entries.max(0) as u64 {
        return Some(GuardBound { entries, lookups: 0 });
    }
    let further = further();
    let lookups = further.iter().map(|(_, w)| w.len() as u64).sum();
    let all: Vec<DArray> = bwa.iter().copied().chain(further.iter().map(|(start, w)| (*start, &w[..]))).collect();
    Some(GuardBound { entries: entries_bound(read, &all, opt)?, lookups })
}

/// The bound with the D arrays `d_arrays` (the read's first), `None` where it does not apply.
pub fn entries_bound(read: &GuardRead, d_arrays: &[DArray], opt: &GapOptions) -> Option<u64> {
    bound_with(read, d_arrays, opt, true)
}

/// [`entries_bound`], with the D arrays' occurrence caps or with chain floors alone.
fn bound_with(read: &GuardRead, d_arrays: &[DArray], opt: &GapOptions, capped: bool) -> Option<u64> {
    extra_pops_within(read, d_arrays, opt, capped).map(|x| pops_bound(read.bounded_pops, x))
}

/// [`extra_pops`] where the bound applies: not with `-N`, and gap opens pop only as chains (a
/// gap open's other children, and a second gap, score more than bwa pops).
fn extra_pops_within(read: &GuardRead, d_arrays: &[DArray], opt: &GapOptions, capped: bool) -> Option<u64> {
    if opt.mode & MODE_NONSTOP != 0 {
        return None;
    }
    let pushes = Pushes::new(read.best_score, read.d_star, read.counts.full, opt);
    let gap_chains = opt.s_gapo + opt.s_mm.min(opt.s_gape).min(opt.s_gapo) > pushes.last_score;
    if pushes.gaps_pop && !gap_chains {
        return None;
    }
    extra_pops(read, &pushes, d_arrays, capped)
}

/// bwa's D arrays: the read's, and the seed's (from the read's last `seed_len` bases).
pub fn bwa_d_arrays<'a>(watch: &GuardWatch<'a>) -> Vec<DArray<'a>> {
    let len = watch.search.seq.len();
    let mut d_arrays = vec![(0, &watch.fresh[..len])];
    if let Some(seed) = watch.search.seed_width {
        let seed_len = seed.len() - 1;
        d_arrays.push((len - seed_len, &seed[..seed_len]));
    }
    d_arrays
}

/// D arrays (bwt_cal_width) of the read started every [`FURTHER_STARTS`] positions.
pub fn further_d_arrays(watch: &GuardWatch) -> Vec<(usize, Vec<Width>)> {
    let seq = watch.search.seq;
    // bwt_cal_width reads the reversed read, not its complement.
    let reversed: Vec<u8> = seq.iter().map(|&c| if c > 3 { 4 } else { 3 - c }).collect();
    (FURTHER_STARTS..seq.len())
        .step_by(FURTHER_STARTS)
        .map(|start| {
            let mut w = vec![Width::default(); seq.len() - start + 1];
            cal_width(watch.search.bwt, &reversed[start..], &mut w);
            w.pop();
            (start, w)
        })
        .collect()
}

/// The most pushing pops among the entry points' descendants (`None` where a string the bound
/// does not count could pop). At each read position, the strings of n mismatches alive there
/// were born at or above it (entry points of n, and the mismatching children of the strings of
/// n - 1 one position up) and reach it ([`alive_strings`]). Where gap opens pop too, each
/// entry point with a gap heads a chain of its own (its other children score too much).
fn extra_pops(read: &GuardRead, pushes: &Pushes, d_arrays: &[DArray], capped: bool) -> Option<u64> {
    let (seq, counts) = (read.seq, read.counts);
    let len = seq.len();
    let floor = chain_floor(d_arrays[0].1, len);
    let caps = if capped { occurrence_caps(d_arrays, len) } else { vec![vec![u64::MAX; len + 1]; len + 1] };
    let mut total = 0u64;
    // alive[i]: strings of the level above at position i.
    let mut alive = vec![0u64; len + 2];
    for n in 0..=pushes.full {
        if !pushes.can_push(n) {
            break;
        }
        let mut born: Vec<u64> = counts.mismatches(n as usize).iter().map(|&c| c as u64).collect();
        for p in 0..len {
            let kids = if seq[p] > 3 { 4 } else { 3 };
            born[p] = born[p].saturating_add(alive[p + 1].saturating_mul(kids));
        }
        alive = alive_strings(&born, &floor, &caps);
        total = alive.iter().fold(total, |t, &a| t.saturating_add(a));
        if n == 0 && pushes.gaps_pop && total > 0 {
            // Their gap opens would pop, and are not counted.
            return None;
        }
    }
    if !pushes.gaps_pop {
        return Some(total);
    }
    // A gap entry point other than a chain's head that pops is not counted.
    if counts.other_gap_score as i64 <= pushes.last_score as i64 {
        return None;
    }
    // Strings of one insertion, and of one deletion: each kind has strings of one length at a
    // position, so each is capped on its own. A chain's head scores s_gapo, no more than bwa
    // pops where gaps pop: all of them pop.
    for kind in [INSERTION, DELETION] {
        let born: Vec<u64> = counts.chains(kind).iter().map(|&c| c as u64).collect();
        total = alive_strings(&born, &floor, &caps).iter().fold(total, |t, &a| t.saturating_add(a));
    }
    Some(total)
}

/// The read position an entry has reached (bwa's `info & 0xffff`).
fn position(e: &Entry) -> usize {
    (e.info & 0xffff) as usize
}

/// At each position `i`: the strings born at or above it (`born[p]` at position `p`) whose
/// chains reach it, capped by every block prefix lying between `i` and where they were born
/// (each string holds it at the same place, so distinct strings take distinct occurrences).
fn alive_strings(born: &[u64], floor: &[usize], caps: &[Vec<u64>]) -> Vec<u64> {
    let len = born.len() - 1;
    let mut alive = vec![0u64; len + 2];
    for (i, a) in alive.iter_mut().enumerate().take(len + 1) {
        let mut strings = 0u64;
        for p in (i..=len).rev() {
            if floor[p] <= i {
                strings = strings.saturating_add(born[p]);
            }
            strings = strings.min(caps[i][p]);
        }
        *a = strings;
    }
    alive
}

/// bwt_cal_width's blocks, position by position from `offset`: the start of the block each
/// position is in, and its prefix's count there, or `None` where the block did not occur (it
/// ends there; a block that occurs has widths that are counts).
fn block_prefixes(width: &[Width], offset: usize) -> impl Iterator<Item = (usize, usize, Option<u64>)> + '_ {
    let (mut start, mut bid) = (offset, 0);
    width.iter().enumerate().map(move |(x, w)| {
        let block_start = start;
        if w.bid > bid {
            (bid, start) = (w.bid, offset + x + 1);
            (offset + x, block_start, None)
        } else {
            (offset + x, block_start, Some(w.w))
        }
    })
}

/// For each position `i` (0 to len), the lowest position a chain of matching children
/// from `i` can reach: one above the start of the last block of the D array that ends below
/// `i` and did not occur (0 when none does). `width` is bwt_cal_width's, unchanged by hits.
pub fn chain_floor(width: &[Width], len: usize) -> Vec<usize> {
    let (mut floor, mut lowest) = (vec![0; len + 1], 0);
    for (x, block_start, count) in block_prefixes(&width[..len], 0) {
        floor[x] = lowest;
        if count.is_none() {
            lowest = block_start + 1;
        }
    }
    floor[len] = lowest;
    floor
}

/// `caps[i][p]`: the fewest occurrences of a prefix of a block lying between positions `i`
/// and `p` (u64::MAX where none lies there), row by row ([`caps_row`]).
fn occurrence_caps(d_arrays: &[DArray], len: usize) -> Vec<Vec<u64>> {
    (0..=len)
        .map(|i| {
            let mut row = vec![u64::MAX; len + 1];
            caps_row(d_arrays, i, &mut row);
            row
        })
        .collect()
}

/// Row `i` of [`occurrence_caps`] into `row` (len + 1 cells, u64::MAX on entry), from `i` on.
/// Only the D arrays' block prefixes have known counts (their widths): a prefix from `r` to
/// `x` lies between `i` and `p` where `i <= r` and `x < p`.
fn caps_row(d_arrays: &[DArray], i: usize, row: &mut [u64]) {
    let len = row.len() - 1;
    // First, at x + 1, the fewest occurrences of a prefix ending at x that starts at i or above.
    for &(offset, width) in d_arrays {
        for (x, block_start, count) in block_prefixes(width, offset) {
            if let (Some(w), true) = (count, x < len && block_start >= i) {
                row[x + 1] = row[x + 1].min(w);
            }
        }
    }
    for p in i..len {
        row[p + 1] = row[p + 1].min(row[p]);
    }
}

/// Which mismatch-only entries can push children.
struct Pushes {
    best_score: i32,
    /// The last score bwa pops (`best + s_mm`).
    last_score: i32,
    /// Gap opens score no more than bwa pops.
    gaps_pop: bool,
    /// Differences before the first hit and after it (`min(d* + 1, full)`).
    full: i32,
    after: i32,
    s_mm: i32,
}

impl Pushes {
    fn new(best_score: i32, d_star: i32, full: i32, opt: &GapOptions) -> Pushes {
        let last_score = best_score + opt.s_mm;
        let after = (d_star + 1).min(full);
        let gaps_pop = opt.s_gapo <= last_score;
        Pushes { best_score, last_score, gaps_pop, full, after, s_mm: opt.s_mm }
    }

    /// An entry of `n` mismatches pushes if popped with a difference left: before the first
    /// hit (scores up to the best) with the full limit, after it (up to the last score) with
    /// `after`.
    fn can_push(&self, n: i32) -> bool {
        let score = n * self.s_mm;
        (score <= self.best_score && n < self.full) || (score <= self.last_score && n < self.after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widths(bids: &[i32]) -> Vec<Width> {
        bids.iter().map(|&bid| Width { w: 1, bid }).collect()
    }

    #[test]
    fn a_position_counts_only_the_block_prefixes_between_it_and_the_mismatch() {
        // Block [0, 3] failed at 3; block [4, ...] occurs with widths 9, 5, 2.
        let w = [
            Width { w: 40, bid: 0 },
            Width { w: 30, bid: 0 },
            Width { w: 20, bid: 0 },
            Width { w: 0, bid: 1 },
            Width { w: 9, bid: 1 },
            Width { w: 5, bid: 1 },
            Width { w: 2, bid: 1 },
            Width { w: 0, bid: 2 },
        ];
        let caps = occurrence_caps(&[(0, &w[..7])], 7);
        // From position 0 the first block's prefixes count.
        assert_eq!(&caps[0][..4], &[u64::MAX, 40, 30, 20]);
        // Position 3 holds no start of an occurring prefix before 4; past 4 the second block's.
        assert_eq!(&caps[3][3..], &[u64::MAX, u64::MAX, 9, 5, 2]);
        // From position 1 block 0's prefixes start too high up (they start at 0).
        assert_eq!(caps[1][3], u64::MAX);
        assert_eq!(caps[1][7], 2);
    }

    fn gap_entry(i: u32, score: u32, n_mm: u8, n_del: u16) -> Entry {
        let n_ins = 1 - n_del;
        Entry { info: score << 21 | i, n_mm, n_gapo: 1, n_ins, n_del, ..Entry::default() }
    }

    #[test]
    fn gap_opens_head_chains_of_their_kind_and_others_keep_their_lowest_score() {
        let entries = [
            gap_entry(5, 11, 0, 1),
            gap_entry(5, 11, 0, 0),
            gap_entry(7, 11, 0, 1),
            // With a mismatch: not a chain's head.
            gap_entry(6, 14, 1, 1),
        ];
        let counts = EntryCounts::of(&entries, 9, 2);
        let deletions = counts.chains(DELETION);
        assert_eq!((deletions[5], deletions[7], deletions.iter().sum::<u32>()), (1, 1, 2));
        let insertions = counts.chains(INSERTION);
        assert_eq!((insertions[5], insertions.iter().sum::<u32>()), (1, 1));
        assert_eq!(counts.other_gap_score, 14);
        assert!(counts.mm.iter().all(|&c| c == 0));
    }

    #[test]
    fn a_gap_entry_point_other_than_a_chains_head_that_pops_leaves_no_bound() {
        // A read of 9 bases, one block that occurs; full 4, best 9 (three mismatches): bwa pops
        // up to 12, so a gap open (11) pops, and only as a chain (11 + 3 > 12).
        let (seq, w) = ([0u8; 9], [Width { w: 5, bid: 0 }; 9]);
        let bound = |other_score: u32| {
            let counts = EntryCounts::of(&[gap_entry(5, 11, 0, 1), gap_entry(6, other_score, 1, 1)], 9, 4);
            let read = GuardRead { seq: &seq, counts: &counts, bounded_pops: 10, best_score: 9, d_star: 3 };
            entries_bound(&read, &[(0, &w[..])], &GapOptions::default())
        };
        // The chain's head counts: more than the bounded search's pushing pops.
        assert!(bound(14).is_some_and(|b| b > 1 + 8 * 10));
        // Scored no more than the last score, the other entry point would pop uncounted.
        assert!(bound(12).is_none());
    }

    #[test]
    fn strings_reach_down_to_their_chains_floor_and_no_more_than_a_cap_allows() {
        // Two strings born at 4, one at 2; chains from 4 reach 1, from 2 reach 0.
        let born = [0, 0, 1, 0, 2];
        let floor = [0, 0, 0, 0, 1];
        let mut caps = vec![vec![u64::MAX; 5]; 5];
        // Between positions 1 and 4 lies a block prefix that occurs once: at 1 it caps the
        // strings born at 4, not the one born at 2.
        caps[1][4] = 1;
        let alive = alive_strings(&born, &floor, &caps);
        assert_eq!(&alive[..5], &[1, 2, 3, 2, 2]);
    }

    #[test]
    fn a_chain_stops_above_the_last_block_that_did_not_occur() {
        // Blocks [0, 3] and [4, 6] failed; [7, 9] occurs.
        let w = widths(&[0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3]);
        let floor = chain_floor(&w, 10);
        assert_eq!(&floor[..5], &[0, 0, 0, 0, 1]);
        assert_eq!(&floor[5..], &[1, 1, 5, 5, 5, 5]);
    }

    #[test]
    fn the_bounded_peak_replaces_eight_entries_a_pop_with_what_the_stack_held() {
        // 10 bounded pops whose stack held at most 20 entries, 2 of them with entry points,
        // and 3 pushing pops of their descendants: 20 + 9 x 2 + 8 x 3.
        assert_eq!(peak_bound(20, 2, 3), 62);
        assert_eq!(pops_bound(10, 3), 105);
        // Where every pop has entry points, eight a pop is the lesser.
        assert!(peak_bound(41, 5, 0) > pops_bound(5, 0));
    }
}
