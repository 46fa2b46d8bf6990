//! Suffix comparison in bounded time, whatever the common prefix: a difference-cover sample.
//!
//! Long exact repeats make plain word-by-word comparison cost their whole length per
//! comparison. The sharpest case is bwa's own: N runs become `lrand48() & 3` bases, whose low
//! state bits have period 2^19, so all N runs of a genome are copies of one 524,288-base
//! sequence (millions of bases of exact repeats in a human-like genome).
//!
//! A difference cover D modulo v has, for every d, some x, y in D with y - x = d (mod v). The
//! sample is the positions p with p mod v in D; its suffixes are fully ranked once (sorted by
//! their first v bases, then prefix doubling with the ranks of p + h, which are samples too).
//! Any two suffixes i, j then share an offset delta < v with i + delta and j + delta both
//! sampled: they compare by at most delta bases and then by those two ranks (Kärkkäinen,
//! Sanders and Burkhardt's difference-cover sampling; Bowtie sorts blockwise the same way).
//!
//! D = {0, 1, ..., m-1} and {m, 2m, ..., (m-1)m} modulo v = m^2: d = qm - r with 0 <= r < m
//! gives x = r, y = qm mod v. |D| = 2m - 1, so the ranks take 4 (2m-1)/m^2 bytes per symbol.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::text::PackedText;

/// m for the text's sort: v = 4096 bases, 127 samples per 4096 positions (0.124 bytes of ranks
/// per symbol); a comparison reads at most 128 words of each suffix before the ranks decide.
pub const DEFAULT_COVER_ROOT: u64 = 64;

/// The ranks of the sampled suffixes among themselves.
pub struct CoverRanks<'t> {
    text: &'t PackedText,
    m: u64,
    v: u64,
    /// Slot of residue r within D (meaningful only for r in D).
    slot: Vec<u32>,
    /// rank[block * |D| + slot]: the suffix's rank among the samples.
    rank: Vec<u32>,
    /// log2(m) when m is a power of two (the default): shifts and masks instead of divisions.
    m_shift: Option<u32>,
}

impl<'t> CoverRanks<'t> {
    /// Sorts the sampled suffixes of `text` for the cover of v = m^2 (m >= 1).
    pub fn build(text: &'t PackedText, m: u64) -> CoverRanks<'t> {
        let v = m * m;
        let mut slot = vec![u32::MAX; v as usize];
        let cover: Vec<u64> = (0..m).chain((1..m).map(|k| k * m)).collect();
        for (s, &r) in cover.iter().enumerate() {
            slot[r as usize] = s as u32;
        }
        let n = text.len();
        let blocks = n.div_ceil(v);
        let m_shift = m.is_power_of_two().then(|| m.trailing_zeros());
        let mut ranks = CoverRanks { text, m, v, slot, rank: vec![0; (blocks * cover.len() as u64) as usize], m_shift };

        // Sorted by the first v bases: by their first 32 as a key read once per sample (a
        // comparison would read two scattered windows), then the ties by comparison. Ties on v
        // bases (long repeats) are refined by doubling below.
        let mut keyed: Vec<(u64, u64)> = (0..blocks)
            .into_par_iter()
            .flat_map_iter(|b| cover.iter().map(move |&r| b * v + r))
            .filter(|&p| p < n)
            .map(|p| (text.window(p), p))
            .collect();
        assert!(keyed.len() < u32::MAX as usize, "too many samples for u32 ranks");
        keyed.par_sort_unstable_by_key(|&(key, _)| key);
        keyed
            .par_chunk_by_mut(|x, y| x.0 == y.0)
            .for_each(|g| g.sort_unstable_by(|&(_, a), &(_, b)| compare_prefixes(text, a, b, v)));
        let mut positions: Vec<u64> = keyed.par_iter().map(|&(_, p)| p).collect();
        drop(keyed);
        let mut ties = Vec::new();
        let tied_to_previous: Vec<bool> =
            positions.par_windows(2).map(|w| compare_prefixes(text, w[0], w[1], v) == Ordering::Equal).collect();
        let mut start = 0;
        for i in 1..=positions.len() {
            if i == positions.len() || !tied_to_previous[i - 1] {
                ranks.set_group(&positions[start..i], start, &mut ties);
                start = i;
            }
        }

        // Groups tied on h bases are sorted by the rank of p + h (also a sample, as h is a
        // multiple of v), giving the order on 2h bases. All groups read the ranks before any
        // group writes them.
        let mut h = v;
        while !ties.is_empty() {
            let refined: Vec<(usize, Vec<(u64, u64)>)> = ties
                .par_iter()
                .map(|&(s, e): &(usize, usize)| {
                    let mut keyed: Vec<(u64, u64)> = positions[s..e].iter().map(|&p| (ranks.key(p + h), p)).collect();
                    keyed.sort_unstable();
                    (s, keyed)
                })
                .collect();
            ties.clear();
            for (s, keyed) in refined {
                let mut from = 0;
                for i in 1..=keyed.len() {
                    if i == keyed.len() || keyed[i].0 != keyed[from].0 {
                        let group: Vec<u64> = keyed[from..i].iter().map(|&(_, p)| p).collect();
                        positions[s + from..s + i].copy_from_slice(&group);
                        ranks.set_group(&group, s + from, &mut ties);
                        from = i;
                    }
                }
            }
            h *= 2;
        }
        ranks
    }

    pub fn text(&self) -> &'t PackedText {
        self.text
    }

    /// Gives the suffixes of one group (first row `start` among the samples) the rank `start`,
    /// and notes the group as tied if it has more than one.
    fn set_group(&mut self, group: &[u64], start: usize, ties: &mut Vec<(usize, usize)>) {
        for &p in group {
            let i = self.index(p);
            self.rank[i] = start as u32;
        }
        if group.len() > 1 {
            ties.push((start, start + group.len()));
        }
    }

    #[inline]
    fn index(&self, p: u64) -> usize {
        let (block, r) = match self.m_shift {
            Some(s) => (p >> (2 * s), p & (self.v - 1)),
            None => (p / self.v, p % self.v),
        };
        let s = self.slot[r as usize];
        debug_assert!(s != u32::MAX, "{p} is not sampled");
        block as usize * (2 * self.m - 1) as usize + s as usize
    }

    /// Sort key of the sampled suffix at `p` (`p == n`, the empty suffix, is smallest).
    #[inline]
    fn key(&self, p: u64) -> u64 {
        if p == self.text.len() {
            0
        } else {
            self.rank[self.index(p)] as u64 + 1
        }
    }

    /// The offset delta < v at which both `i + delta` and `j + delta` are sampled.
    #[inline]
    fn offset(&self, i: u64, j: u64) -> u64 {
        let (m, v) = (self.m, self.v);
        if let Some(s) = self.m_shift {
            let mask = v - 1;
            let d = j.wrapping_sub(i) & mask;
            let x = (((d + m - 1) >> s) << s) - d;
            return (x + v - (i & mask)) & mask;
        }
        let d = (j % v + v - i % v) % v;
        let q = d.div_ceil(m);
        let x = q * m - d;
        (x + v - i % v) % v
    }

    /// Compares the suffixes at `a` and `b` (`a != b`): at most v bases, then two ranks.
    pub fn compare(&self, a: u64, b: u64) -> Ordering {
        // Most pairs differ in their first word: no offset arithmetic for them.
        let first = compare_prefixes(self.text, a, b, 32);
        if first != Ordering::Equal {
            return first;
        }
        self.compare_past(a, b, 32)
    }

    /// Compares suffixes `a != b` known to agree on their first `known` bases (both at least
    /// that long): the bases from `known` up to the sampled offset, then the two ranks.
    pub fn compare_past(&self, a: u64, b: u64, known: u64) -> Ordering {
        let delta = self.offset(a, b);
        let bases = if delta > known {
            compare_prefixes(self.text, a + known, b + known, delta - known)
        } else {
            Ordering::Equal
        };
        bases.then_with(|| self.key(a + delta).cmp(&self.key(b + delta)))
    }

    /// Compares suffixes `a != b` known to agree on their first v bases: their ranks at the
    /// sampled offset (less than v) decide, no base is read.
    #[inline]
    fn compare_agreeing(&self, a: u64, b: u64) -> Ordering {
        let delta = self.offset(a, b);
        self.key(a + delta).cmp(&self.key(b + delta))
    }

    /// Sorts a group of suffixes whose first 64-base keys are equal (zeros past the end of the
    /// text) into suffix order; `pos` gives an item's position. See [`sort_agreeing`](Self::sort_agreeing).
    pub fn sort_tied<T: Copy + Send + Sync>(&self, items: &mut [T], pos: &(impl Fn(&T) -> u64 + Sync)) {
        if items.len() < 2 {
            return;
        }
        // Equal keys agree on 64 bases unless a suffix ends within them (it reads as A's).
        let n = self.text.len();
        let known = if items.iter().all(|x| pos(x) + 64 <= n) { 64 } else { 0 };
        self.sort_agreeing(items, known, pos);
    }

    /// Sorts suffixes that agree on their first `known` bases into suffix order, reading each
    /// suffix's bases about once rather than once per comparison (long exact repeats, such as
    /// the copies of bwa's N fill, agree on thousands of bases): a leader is picked, every
    /// suffix finds where it first differs from the leader (up to base v), and that splits the
    /// group into classes whose order is known: those smaller than the leader by how far they
    /// agree with it (ascending), those agreeing with it on v bases, those greater (descending).
    /// The suffixes of a class agree on as many bases as they agree with the leader: a class
    /// below v is sorted the same way from there, and the class that agrees on v bases by the
    /// ranks alone (their sampled offset is under v). Small groups, and groups past a
    /// recursion depth, are sorted by [`compare_past`](Self::compare_past).
    pub fn sort_agreeing<T: Copy + Send + Sync>(&self, items: &mut [T], known: u64, pos: &(impl Fn(&T) -> u64 + Sync)) {
        self.sort_group(items, known, pos, 0);
    }

    fn sort_group<T: Copy + Send + Sync>(
        &self,
        items: &mut [T],
        known: u64,
        pos: &(impl Fn(&T) -> u64 + Sync),
        depth: u32,
    ) {
        let g = items.len();
        if g < 2 {
            return;
        }
        let v = self.v;
        if g <= SMALL_GROUP || depth >= MAX_DEPTH || known >= v {
            let by = |x: &T, y: &T| self.compare_past(pos(x), pos(y), known);
            if g > PARALLEL_GROUP {
                items.par_sort_unstable_by(by);
            } else {
                items.sort_unstable_by(by);
            }
            return;
        }
        let leader = pos(&items[g / 2]);
        let words = LeaderWords::new(self.text, leader, known, v);
        // The class's sort key: smaller ones by agreement ascending, then v, then greater
        // ones by agreement descending.
        let class_of = |x: &T| -> (u64, T) {
            let p = pos(x);
            let class = if p == leader {
                v
            } else {
                let difference = match &words {
                    Some(words) if p + v <= self.text.len() => words.first_difference(self.text, p),
                    _ => first_difference(self.text, p, leader, known, v),
                };
                match difference {
                    (_, Ordering::Equal) => v,
                    (l, Ordering::Less) => l,
                    (l, Ordering::Greater) => 2 * v - l,
                }
            };
            (class, *x)
        };
        let mut keyed: Vec<(u64, T)>;
        if g > PARALLEL_GROUP {
            keyed = items.par_iter().map(class_of).collect();
            keyed.par_sort_unstable_by_key(|&(c, _)| c);
            items.par_iter_mut().zip(keyed.par_iter()).for_each(|(x, &(_, y))| *x = y);
        } else {
            keyed = items.iter().map(class_of).collect();
            keyed.sort_unstable_by_key(|&(c, _)| c);
            for (x, &(_, y)) in items.iter_mut().zip(keyed.iter()) {
                *x = y;
            }
        }
        // The classes, as disjoint parts of `items`.
        let mut classes: Vec<(u64, &mut [T])> = Vec::new();
        let mut rest = items;
        let mut from = 0;
        for i in 1..=g {
            if i == g || keyed[i].0 != keyed[from].0 {
                let (class, tail) = std::mem::take(&mut rest).split_at_mut(i - from);
                if class.len() > 1 {
                    classes.push((keyed[from].0, class));
                }
                rest = tail;
                from = i;
            }
        }
        drop(keyed);
        let sort_class = |(class, part): (u64, &mut [T])| {
            if class == v {
                let by = |x: &T, y: &T| self.compare_agreeing(pos(x), pos(y));
                if part.len() > PARALLEL_GROUP {
                    part.par_sort_unstable_by(by);
                } else {
                    part.sort_unstable_by(by);
                }
            } else {
                let agreed = if class < v { class } else { 2 * v - class };
                self.sort_group(part, agreed, pos, depth + 1);
            }
        };
        if g > PARALLEL_GROUP {
            classes.into_par_iter().for_each(sort_class);
        } else {
            classes.into_iter().for_each(sort_class);
        }
    }
}

/// Groups of at most this many suffixes are sorted by comparisons alone.
const SMALL_GROUP: usize = 4;
/// Groups of more suffixes are split and sorted in parallel.
const PARALLEL_GROUP: usize = 1 << 14;
/// Splits deeper than this (an unlucky run of leaders) leave the group to comparisons.
const MAX_DEPTH: u32 = 48;

/// A leader's bases `from..cap`, read once as 32-base words for [`first_difference`] against
/// each suffix of its group (the suffix's own words are then read in order, one load each).
struct LeaderWords {
    from: u64,
    cap: u64,
    words: Vec<u64>,
    /// Keeps the bases of the last word that are below `cap`.
    last_mask: u64,
}

impl LeaderWords {
    /// `None` when the leader has fewer than `cap` bases.
    fn new(text: &PackedText, leader: u64, from: u64, cap: u64) -> Option<LeaderWords> {
        if leader + cap > text.len() || from >= cap {
            return None;
        }
        let words: Vec<u64> = (from..cap).step_by(32).map(|i| text.window(leader + i)).collect();
        let tail = (cap - from) % 32;
        let last_mask = if tail == 0 { !0 } else { !0u64 << (64 - 2 * tail) };
        Some(LeaderWords { from, cap, words, last_mask })
    }

    /// [`first_difference`] of the suffix at `p` (which has at least `cap` bases) and the leader.
    #[inline]
    fn first_difference(&self, text: &PackedText, p: u64) -> (u64, Ordering) {
        let t = text.words();
        let start = p + self.from;
        let (mut w, shift) = ((start >> 5) as usize, 2 * (start & 31) as u32);
        let last = self.words.len() - 1;
        for (k, &lw) in self.words.iter().enumerate() {
            // The window at start + 32 k; (x >> 1) >> (63 - shift) is 0 when shift is 0.
            let mut x = t[w] << shift | (t[w + 1] >> 1) >> (63 - shift);
            let mut l = lw;
            if k == last {
                (x, l) = (x & self.last_mask, l & self.last_mask);
            }
            if x != l {
                return (self.from + 32 * k as u64 + (x ^ l).leading_zeros() as u64 / 2, x.cmp(&l));
            }
            w += 1;
        }
        (self.cap, Ordering::Equal)
    }
}

/// Where suffixes `a != b`, which agree on their first `from` bases, first differ, looking up
/// to base `cap`: `(l, order)` with `l < cap` the first base where they differ or one ends
/// (the shorter sorts first), or `(cap, Equal)` when they agree on `cap` bases.
#[inline]
fn first_difference(text: &PackedText, a: u64, b: u64, from: u64, cap: u64) -> (u64, Ordering) {
    let n = text.len();
    let mut i = from;
    while i < cap {
        let step = (cap - i).min(32);
        let (ra, rb) = (n - (a + i), n - (b + i));
        let m = ra.min(rb).min(step);
        if m > 0 {
            let keep = !0u64 << (64 - 2 * m);
            let (wa, wb) = (text.window(a + i) & keep, text.window(b + i) & keep);
            if wa != wb {
                return (i + (wa ^ wb).leading_zeros() as u64 / 2, wa.cmp(&wb));
            }
        }
        if m < step {
            return (i + m, ra.cmp(&rb));
        }
        i += step;
    }
    (cap, Ordering::Equal)
}

/// Compares the first `len` bases of the suffixes at `a` and `b` (`a != b`); a suffix that ends
/// within them sorts first. `Equal` means both have at least `len` bases and they agree.
pub fn compare_prefixes(text: &PackedText, mut a: u64, mut b: u64, len: u64) -> Ordering {
    let n = text.len();
    let mut left = len;
    while left > 0 {
        let step = left.min(32);
        let (ra, rb) = (n - a, n - b);
        let m = ra.min(rb).min(step);
        if m > 0 {
            let keep = !0u64 << (64 - 2 * m);
            let (wa, wb) = (text.window(a) & keep, text.window(b) & keep);
            if wa != wb {
                return wa.cmp(&wb);
            }
        }
        if m < step {
            return ra.cmp(&rb);
        }
        a += step;
        b += step;
        left -= step;
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::compare_suffixes;
    use crate::text::tests::text_of;

    fn random_bases(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 62) as u8
            })
            .collect()
    }

    /// All suffixes sorted with the cover equal the plain comparison sort.
    fn check(seq: &[u8], m: u64) {
        let t = text_of(seq);
        let ranks = CoverRanks::build(&t, m);
        let mut plain: Vec<u64> = (0..t.len()).collect();
        plain.sort_by(|&a, &b| compare_suffixes(&t, a, b));
        let mut covered: Vec<u64> = (0..t.len()).collect();
        covered.sort_by(|&a, &b| ranks.compare(a, b));
        assert_eq!(covered, plain, "m {m}, text length {}", seq.len());
    }

    #[test]
    fn offsets_land_on_samples() {
        let t = text_of(&random_bases(300, 3));
        for m in [1, 2, 3, 4, 8] {
            let r = CoverRanks::build(&t, m);
            for i in 0..r.v * 2 {
                for j in 0..r.v * 2 {
                    let d = r.offset(i, j);
                    assert!(d < r.v);
                    assert_ne!(r.slot[((i + d) % r.v) as usize], u32::MAX);
                    assert_ne!(r.slot[((j + d) % r.v) as usize], u32::MAX);
                }
            }
        }
    }

    #[test]
    fn long_exact_tandem_repeats() {
        for unit in [1usize, 2, 3, 6, 7, 171] {
            let u = random_bases(unit, unit as u64);
            let mut seq: Vec<u8> = u.iter().cycle().take(3000).copied().collect();
            seq.extend(random_bases(50, 9));
            seq.extend(u.iter().cycle().take(1200));
            for m in [1, 2, 4, 8, 64] {
                check(&seq, m);
            }
        }
    }

    #[test]
    fn long_identical_duplications() {
        let dup = random_bases(1500, 5);
        let mut seq = random_bases(200, 6);
        for k in 0..4 {
            seq.extend(&dup);
            seq.extend(random_bases(k * 37 + 1, 7 + k as u64));
        }
        // One copy with a single change near its end.
        let mut late = dup.clone();
        late[1400] ^= 1;
        seq.extend(late);
        for m in [1, 3, 4, 16] {
            check(&seq, m);
        }
    }

    /// Groups of suffixes that agree on their first `known` bases, sorted by the leader
    /// splits, are in plain suffix order: exact copies longer than v (the N fill's case), a
    /// tandem repeat (nested agreements), copies diverging late, whole text as one group.
    #[test]
    fn leader_splits_sort_groups_in_suffix_order() {
        let unit = random_bases(300, 31);
        let mut seq = random_bases(40, 32);
        for k in 0..6 {
            seq.extend(&unit);
            seq.extend(random_bases(k * 7 + 1, 33 + k as u64));
        }
        let mut late = unit.clone();
        late[250] ^= 2;
        seq.extend(&late);
        seq.extend(random_bases(3, 40).iter().cycle().take(400));
        seq.extend(vec![1u8; 150]);
        let t = text_of(&seq);
        let n = t.len();
        for m in [2u64, 3, 8, 16] {
            let ranks = CoverRanks::build(&t, m);
            for known in [0u64, 4, 9] {
                // Groups: suffixes with the same first `known` bases (and at least that long).
                let mut all: Vec<u64> = (0..n).filter(|&p| p + known <= n).collect();
                all.sort_by(|&a, &b| compare_prefixes(&t, a, b, known).then(a.cmp(&b)));
                let mut from = 0;
                for i in 1..=all.len() {
                    if i == all.len() || compare_prefixes(&t, all[from], all[i], known) != Ordering::Equal {
                        let mut group = all[from..i].to_vec();
                        // A scrambled start (the GPU leaves equal keys in any order).
                        group.reverse();
                        let third = group.len() / 3;
                        group.rotate_left(third);
                        let mut expect = group.clone();
                        expect.sort_by(|&a, &b| compare_suffixes(&t, a, b));
                        ranks.sort_agreeing(&mut group, known, &|&p| p);
                        assert_eq!(group, expect, "m {m} known {known}");
                        from = i;
                    }
                }
            }
            // One group of every suffix, known 0.
            let mut everything: Vec<u64> = (0..n).rev().collect();
            let mut expect = everything.clone();
            expect.sort_by(|&a, &b| compare_suffixes(&t, a, b));
            ranks.sort_agreeing(&mut everything, 0, &|&p| p);
            assert_eq!(everything, expect, "m {m}, one group");
        }
    }

    /// The leader's words give the same first differences as the generic comparison.
    #[test]
    fn leader_words_find_the_first_difference() {
        let mut seq = random_bases(700, 21);
        let copy = seq[100..400].to_vec();
        seq.extend(&copy);
        seq.extend(random_bases(50, 22));
        seq.extend(vec![0u8; 300]);
        let t = text_of(&seq);
        let n = t.len();
        for leader in [0u64, 100, 101, 131, 700, 705, 1050, 1100] {
            for (from, cap) in [(0u64, 64u64), (0, 300), (17, 300), (32, 256), (64, 301), (5, 6)] {
                let Some(words) = LeaderWords::new(&t, leader, from, cap) else { continue };
                for p in 0..n {
                    if p == leader || p + cap > n || compare_prefixes(&t, p, leader, from) != Ordering::Equal {
                        continue;
                    }
                    assert_eq!(
                        words.first_difference(&t, p),
                        first_difference(&t, p, leader, from, cap),
                        "leader {leader} p {p} from {from} cap {cap}"
                    );
                }
            }
        }
    }

    #[test]
    fn short_and_constant_texts() {
        for len in [1, 2, 5, 31, 33, 100] {
            for m in [1, 2, 4] {
                check(&random_bases(len, len as u64), m);
                check(&vec![0u8; len], m);
            }
        }
    }
}
