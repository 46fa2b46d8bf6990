//! A bound on bwa's `-m` count for a search bounded from the start ([`crate::prune_bound`]).
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
//!   their mismatches occurs ([`occurrence_caps`]); entries that score more than the last
//!   score bwa pops (`best + s_mm`), and those whose differences leave nothing to push, push
//!   nothing.
//!
//! It applies where gap entries pop, if at all, only as chains of one gap open (its other
//! children, and a second gap, cost more than `best + s_mm`).

use bcuda::sai::{AlnHit, GapOptions, MODE_NONSTOP};
use bcuda::search::stack::Entry;
use bcuda::search::{cal_width, Search, Step, Width};

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
}

impl<'a> GuardWatch<'a> {
    pub fn new(search: &'a Search<'a>, fresh: &'a [Width], full: i32, g: i32) -> GuardWatch<'a> {
        GuardWatch { search, fresh, full, g, entry_points: Vec::new(), inconsistent: false }
    }

    /// Entry `e`, popped before the first hit: the children bwa pushes that the bounded
    /// search does not.
    pub fn watch(&mut self, e: &Entry) {
        let (bwa, bwa_hit) = self.children(e, self.full);
        let (bounded, bounded_hit) = self.children(e, self.g);
        self.inconsistent |= bwa_hit != bounded_hit;
        self.entry_points.extend(bwa.into_iter().filter(|c| !bounded.contains(c)));
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
const FURTHER_STARTS: usize = 8;

/// What bwa's stack can hold at most: `None` where the bound does not apply (`-N`, gap
/// entries that pop other than as chains of one gap), else `1 + 8 x` the pushing pops
/// (`bounded_pops` and the entry points' descendants, [`extra_pops`]). When bwa's D arrays (the
/// read's and the seed's) leave the bound over `-m`, D arrays started every [`FURTHER_STARTS`]
/// positions cap it too, at a lookup a base.
pub fn stack_bound(
    watch: &GuardWatch,
    bounded_pops: usize,
    best: &AlnHit,
    d_star: i32,
    opt: &GapOptions,
) -> Option<GuardBound> {
    if opt.mode & MODE_NONSTOP != 0 || watch.inconsistent {
        return None;
    }
    let pushes = Pushes::new(watch, best.score as i32, d_star, opt);
    // Gap opens may pop only as chains: a gap open's other children, and a second gap, score
    // more than bwa pops.
    let gap_chains = opt.s_gapo + opt.s_mm.min(opt.s_gape).min(opt.s_gapo) > pushes.last_score;
    if pushes.gaps_pop && !gap_chains {
        return None;
    }
    let entries = |extra: u64| 1u64.saturating_add((bounded_pops as u64).saturating_add(extra).saturating_mul(8));
    let mut blocks = bwa_blocks(watch);
    let bound = GuardBound { entries: entries(extra_pops(watch, &pushes, &blocks)?), lookups: 0 };
    if bound.entries <= opt.max_entries.max(0) as u64 {
        return Some(bound);
    }
    let further = further_blocks(watch);
    blocks.extend(further.iter().map(|(start, w)| (*start, &w[..])));
    let lookups = further.iter().map(|(_, w)| w.len() as u64).sum();
    Some(GuardBound { entries: entries(extra_pops(watch, &pushes, &blocks)?), lookups })
}

/// bwa's D arrays as blocks: the read's, and the seed's (from the read's last `seed_len` bases).
fn bwa_blocks<'a>(watch: &GuardWatch<'a>) -> Vec<(usize, &'a [Width])> {
    let len = watch.search.seq.len();
    let mut blocks = vec![(0, &watch.fresh[..len])];
    if let Some(seed) = watch.search.seed_width {
        let seed_len = seed.len() - 1;
        blocks.push((len - seed_len, &seed[..seed_len]));
    }
    blocks
}

/// D arrays (bwt_cal_width) of the read started every [`FURTHER_STARTS`] positions.
fn further_blocks(watch: &GuardWatch) -> Vec<(usize, Vec<Width>)> {
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
fn extra_pops(watch: &GuardWatch, pushes: &Pushes, blocks: &[(usize, &[Width])]) -> Option<u64> {
    let seq = watch.search.seq;
    let len = seq.len();
    let floor = chain_floor(watch.fresh, len);
    let caps = occurrence_caps(blocks, len);
    let mut total = 0u64;
    // alive[i]: strings of the level above at position i.
    let mut alive = vec![0u64; len + 2];
    for n in 0..=pushes.full {
        if !pushes.can_push(n) {
            break;
        }
        let mut born = vec![0u64; len + 1];
        for c in watch.entry_points.iter().filter(|c| c.n_mm as i32 == n && c.n_gapo == 0 && c.n_gape == 0) {
            born[position(c)] += 1;
        }
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
    // Strings of one insertion, and of one deletion: each kind has strings of one length at a
    // position, so each is capped on its own.
    for deletion in [false, true] {
        let born = gap_chains_born(&watch.entry_points, pushes.last_score, len, deletion)?;
        total = alive_strings(&born, &floor, &caps).iter().fold(total, |t, &a| t.saturating_add(a));
    }
    Some(total)
}

/// At each position, the entry points with one gap open (of deletions, or of insertions) that
/// bwa pops: each heads a chain. `None` if an entry point with a gap and more differences pops.
fn gap_chains_born(entry_points: &[Entry], last_score: i32, len: usize, deletion: bool) -> Option<Vec<u64>> {
    let mut born = vec![0u64; len + 1];
    for c in entry_points.iter().filter(|c| c.n_gapo > 0 || c.n_gape > 0) {
        if c.score() as i32 > last_score {
            continue;
        }
        if c.n_mm > 0 || c.n_gapo > 1 || c.n_gape > 0 {
            return None;
        }
        if (c.n_del > 0) == deletion {
            born[position(c).min(len)] += 1;
        }
    }
    Some(born)
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
/// and `p` (u64::MAX where none lies there). `blocks`: D arrays (bwt_cal_width's) and the
/// position each starts at; only their blocks' prefixes have known counts, their widths.
fn occurrence_caps(blocks: &[(usize, &[Width])], len: usize) -> Vec<Vec<u64>> {
    // At each position, every known prefix ending there: its start and its count.
    let mut prefixes: Vec<Vec<(usize, u64)>> = vec![Vec::new(); len];
    for &(offset, width) in blocks {
        for (x, block_start, count) in block_prefixes(width, offset) {
            if let (Some(w), true) = (count, x < len) {
                prefixes[x].push((block_start, w));
            }
        }
    }
    (0..=len)
        .map(|i| {
            let mut row = vec![u64::MAX; len + 1];
            for p in i..len {
                let here = prefixes[p].iter().filter(|&&(r, _)| r >= i).map(|&(_, w)| w).min();
                row[p + 1] = row[p].min(here.unwrap_or(u64::MAX));
            }
            row
        })
        .collect()
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
    fn new(watch: &GuardWatch, best_score: i32, d_star: i32, opt: &GapOptions) -> Pushes {
        let last_score = best_score + opt.s_mm;
        let after = (d_star + 1).min(watch.full);
        let gaps_pop = opt.s_gapo <= last_score;
        Pushes { best_score, last_score, gaps_pop, full: watch.full, after, s_mm: opt.s_mm }
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
    fn gap_opens_that_pop_head_chains_of_their_kind() {
        let entries = [
            gap_entry(5, 11, 0, 1),
            gap_entry(5, 11, 0, 0),
            gap_entry(7, 11, 0, 1),
            // Scores more than bwa pops: never popped.
            gap_entry(6, 14, 1, 1),
        ];
        let deletions = gap_chains_born(&entries, 12, 9, true).unwrap();
        assert_eq!((deletions[5], deletions[7], deletions.iter().sum::<u64>()), (1, 1, 2));
        let insertions = gap_chains_born(&entries, 12, 9, false).unwrap();
        assert_eq!((insertions[5], insertions.iter().sum::<u64>()), (1, 1));
        // A gap open with a mismatch that pops is not a chain the bound counts.
        assert!(gap_chains_born(&entries, 14, 9, true).is_none());
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
}
