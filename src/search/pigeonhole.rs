//! Every alignment within a budget (bwa's score, or `k` edits) of a read to a string that occurs in the genome (either
//! strand), found by pigeonhole searches over the bidirectional index bwa's BWT of both strands
//! is: the candidates whose paths bwa's search would walk (docs/gpu-search.md, "Candidates from
//! pigeonhole searches"). An edit is a mismatch, or with `gaps` a read base the string lacks
//! (an insertion) or a string base the read lacks (a deletion). The read is cut into `k + 1`
//! parts, one of which any such alignment matches exactly. Search j matches part j exactly,
//! extends it to the right over the parts after it, then to the left over those before it, each
//! of which must hold an edit (an alignment with one of them exact is an earlier search's; a
//! deletion between two parts may be found by both searches). The read's bounds
//! (src/search/no_hit.rs, like bwa's D array) prune both directions.

use bcuda_index::Bwt;

use crate::search::no_hit::{exact_part, extend, part_of, part_start, BiInterval, Bounds};

/// One column of an alignment: a read base against a string base (`Base`: a match or a
/// mismatch), a read base the string lacks (`Ins`), or a string base the read lacks (`Del`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Col {
    Base(u8),
    Ins,
    Del(u8),
}

/// An alignment found: its columns, left to right (a `Base` or `Ins` column per read base).
pub type Alignment = Vec<Col>;

/// What an alignment may cost: a score at bwa's penalties (mismatch, gap open, gap extension),
/// at most `max_gapo` gaps (0: mismatches only) and at most `max_edits` edits (mismatches,
/// inserted and deleted bases: bwa's hits hold no more than the read's edit limit).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub score: u32,
    pub s_mm: u32,
    pub s_gapo: u32,
    pub s_gape: u32,
    pub max_gapo: u32,
    pub max_edits: u32,
}

impl Budget {
    /// At most `k` edits, each costing 1: mismatches, and with `gaps` inserted and deleted bases.
    pub fn edits(k: u32, gaps: bool) -> Budget {
        Budget { score: k, s_mm: 1, s_gapo: 1, s_gape: 1, max_gapo: if gaps { u32::MAX } else { 0 }, max_edits: k }
    }

    /// The most edits an alignment within the budget holds.
    fn most_edits(&self) -> u32 {
        (self.score / self.cheapest()).min(self.max_edits)
    }

    /// The least an edit costs.
    fn cheapest(&self) -> u32 {
        if self.max_gapo == 0 {
            self.s_mm
        } else {
            self.s_mm.min(self.s_gapo).min(self.s_gape)
        }
    }
}

/// What an alignment has spent so far: its score, its gaps, and the kind of gap its last
/// column (in the direction it grows) opened or extended.
#[derive(Clone, Copy, Default)]
struct Spent {
    score: u32,
    edits: u32,
    opens: u32,
    gap: Option<Col>,
}

struct Enumeration<'a> {
    bwt: &'a Bwt,
    read: &'a [u8],
    bounds: &'a Bounds,
    budget: Budget,
    parts: usize,
    /// Search j's part, and the least the parts before it cost (an edit each, or the prefix's
    /// bound when larger).
    start: usize,
    end: usize,
    before_start: u32,
    /// The columns right of the part (left to right) and left of it (right to left).
    right_cols: Vec<Col>,
    left_cols: Vec<Col>,
    found: Vec<Alignment>,
    /// The search stops once it has found this many, or spent more lookups than `max_lookups`.
    most: usize,
    lookups: u64,
    max_lookups: u64,
    /// Each extension's parent: the extension whose interval it extends (None: a search's
    /// first), and the one whose children are being explored now.
    extensions: Vec<Option<u32>>,
    at: Option<u32>,
}

/// The alignments of `read` (codes, N as 4, which matches no base) within `budget`, the
/// occurrence lookups spent, and the rounds its extensions take on `lanes` lanes that each
/// extend one interval a round as soon as the extension it depends on is done (the searches'
/// branches depend on nothing else: any order finds the same alignments); None where the read
/// has fewer bases than parts (one more than the most edits the budget pays for).
pub fn within(
    bwt: &Bwt,
    read: &[u8],
    budget: Budget,
    bounds: &Bounds,
    lanes: usize,
) -> Option<(Vec<Alignment>, u64, u64)> {
    let done = search(bwt, read, budget, bounds, (usize::MAX, u64::MAX))?;
    Some((done.found, done.lookups, rounds(&done.extensions, lanes)))
}

/// Whether `read` has any alignment within `budget` (the search stops at the first), and the
/// lookups spent; the answer is None where the read has fewer bases than parts or the search
/// gave up after more than `max_lookups` lookups.
pub fn any_within(bwt: &Bwt, read: &[u8], budget: Budget, bounds: &Bounds, max_lookups: u64) -> (Option<bool>, u64) {
    match search(bwt, read, budget, bounds, (1, max_lookups)) {
        Some(done) => {
            let any = !done.found.is_empty();
            ((!done.over || any).then_some(any), done.lookups)
        }
        None => (None, 0),
    }
}

/// What a search did: the alignments found, the lookups spent, whether it gave up over its
/// lookups, and its extensions' parents.
struct Searched {
    found: Vec<Alignment>,
    lookups: u64,
    over: bool,
    extensions: Vec<Option<u32>>,
}

fn search(
    bwt: &Bwt,
    read: &[u8],
    budget: Budget,
    bounds: &Bounds,
    (most, max_lookups): (usize, u64),
) -> Option<Searched> {
    let (len, parts) = (read.len(), budget.most_edits() as usize + 1);
    if len < parts {
        return None;
    }
    let mut e = Enumeration {
        bwt,
        read,
        bounds,
        budget,
        parts,
        start: 0,
        end: 0,
        before_start: 0,
        right_cols: Vec::new(),
        left_cols: Vec::new(),
        found: Vec::new(),
        most,
        lookups: 0,
        max_lookups,
        extensions: Vec::new(),
        at: None,
    };
    for j in 0..parts {
        e.start = part_start(j, len, parts);
        e.end = if j + 1 < parts { part_start(j + 1, len, parts) } else { len };
        e.before_start = (bounds.before[e.start] as u32).max(j as u32) * budget.cheapest();
        if e.stopped() {
            break;
        }
        let before = e.lookups;
        let exact = exact_part(bwt, read, e.start, e.end, &mut e.lookups);
        // The part's exact match is a chain of dependent extensions.
        e.at = None;
        for _ in 0..(e.lookups - before) / 2 {
            e.at = Some(e.record());
        }
        if let Some(ik) = exact {
            e.right(ik, e.end, Spent::default());
        }
    }
    let over = e.stopped() && e.found.len() < most;
    Some(Searched { found: e.found, lookups: e.lookups, over, extensions: e.extensions })
}

/// Rounds of `lanes` lanes that a tree of extensions (each one's parent) takes, each round
/// taking the ready extensions first come, first served.
pub fn rounds(parents: &[Option<u32>], lanes: usize) -> u64 {
    let mut children = vec![Vec::new(); parents.len()];
    let mut ready = std::collections::VecDeque::new();
    for (id, parent) in parents.iter().enumerate() {
        match parent {
            Some(p) => children[*p as usize].push(id),
            None => ready.push_back(id),
        }
    }
    let mut rounds = 0;
    while !ready.is_empty() {
        let now: Vec<usize> = ready.drain(..ready.len().min(lanes.max(1))).collect();
        for id in now {
            ready.extend(children[id].iter().copied());
        }
        rounds += 1;
    }
    rounds
}

impl Enumeration<'_> {
    /// A new extension, of the interval the one explored now gave.
    fn record(&mut self) -> u32 {
        self.extensions.push(self.at);
        self.extensions.len() as u32 - 1
    }

    fn stopped(&self) -> bool {
        self.found.len() >= self.most || self.lookups > self.max_lookups
    }

    /// `spent` with column `col` (a mismatch, a gap or neither) added, if the budget allows it.
    fn add(&self, spent: Spent, col: Col, read_base: u8) -> Option<Spent> {
        let b = &self.budget;
        let (cost, opens, gap) = match col {
            Col::Base(c) => (if c == read_base { 0 } else { b.s_mm }, spent.opens, None),
            Col::Ins | Col::Del(_) => {
                let kind = Some(if col == Col::Ins { Col::Ins } else { Col::Del(0) });
                if spent.gap == kind {
                    (b.s_gape, spent.opens, kind)
                } else {
                    (b.s_gapo, spent.opens + 1, kind)
                }
            }
        };
        let (score, edits) = (spent.score + cost, spent.edits + (col != Col::Base(read_base)) as u32);
        (score <= b.score && opens <= b.max_gapo && edits <= b.max_edits).then_some(Spent { score, edits, opens, gap })
    }

    /// Extends `ik` over read[i..] with `spent`, then turns left.
    fn right(&mut self, ik: BiInterval, i: usize, spent: Spent) {
        let floor = self.bounds.after[i] as u32 * self.budget.cheapest() + self.before_start;
        if spent.score + floor > self.budget.score || self.stopped() {
            return;
        }
        if i == self.read.len() {
            return self.left(ik, self.start, Spent { gap: None, ..spent }, 0);
        }
        // Appended: entry c is W·(3 - c).
        let kids = extend(self.bwt, &ik, false, &mut self.lookups);
        let (from, id) = (self.at, Some(self.record()));
        let child = |b: u8| Some(kids[3 - b as usize]).filter(|c| c.size > 0);
        let base = self.read[i];
        for b in 0..4u8 {
            if let (Some(c), Some(s)) = (child(b), self.add(spent, Col::Base(b), base)) {
                self.right_with(Col::Base(b), id, |e| e.right(c, i + 1, s));
            }
        }
        // An insertion extends `ik` itself: it waits only for the extension that gave it.
        if let Some(s) = self.add(spent, Col::Ins, base) {
            self.right_with(Col::Ins, from, |e| e.right(ik, i + 1, s));
        }
        for b in 0..4u8 {
            if let (Some(c), Some(s)) = (child(b), self.add(spent, Col::Del(b), base)) {
                self.right_with(Col::Del(b), id, |e| e.right(c, i, s));
            }
        }
    }

    /// Extends `ik` over read[..i] with `spent`, `part_edits` edits in the part of read[i - 1];
    /// a part it finishes must hold one.
    fn left(&mut self, ik: BiInterval, i: usize, spent: Spent, part_edits: usize) {
        if i == 0 {
            return self.report();
        }
        let (len, parts) = (self.read.len(), self.parts);
        let part = part_of(i - 1, len, parts);
        let open = (part + (part_edits == 0) as usize) as u32;
        let floor = (self.bounds.before[i] as u32).max(open) * self.budget.cheapest();
        if spent.score + floor > self.budget.score || self.stopped() {
            return;
        }
        let finishes = part_start(part, len, parts) == i - 1;
        // After read[i - 1]: the part's edits, or none for the next part where it finished one.
        let next = |edits: usize| if finishes { 0 } else { edits };
        // Prepended: entry c is c·W.
        let kids = extend(self.bwt, &ik, true, &mut self.lookups);
        let (from, id) = (self.at, Some(self.record()));
        let child = |b: u8| Some(kids[b as usize]).filter(|c| c.size > 0);
        let base = self.read[i - 1];
        for b in 0..4u8 {
            let edits = part_edits + (b != base) as usize;
            if let (Some(c), Some(s), false) = (child(b), self.add(spent, Col::Base(b), base), finishes && edits == 0) {
                self.left_with(Col::Base(b), id, |e| e.left(c, i - 1, s, next(edits)));
            }
        }
        if let Some(s) = self.add(spent, Col::Ins, base) {
            self.left_with(Col::Ins, from, |e| e.left(ik, i - 1, s, next(part_edits + 1)));
        }
        for b in 0..4u8 {
            if let (Some(c), Some(s)) = (child(b), self.add(spent, Col::Del(b), base)) {
                self.left_with(Col::Del(b), id, |e| e.left(c, i, s, part_edits + 1));
            }
        }
    }

    fn report(&mut self) {
        let exact = self.read[self.start..self.end].iter().map(|&b| Col::Base(b));
        let cols = self.left_cols.iter().rev().copied().chain(exact).chain(self.right_cols.iter().copied());
        self.found.push(cols.collect());
    }

    /// Runs `then` with column `col` right of the part, its interval from extension `at`.
    fn right_with(&mut self, col: Col, at: Option<u32>, then: impl FnOnce(&mut Self)) {
        self.at = at;
        self.right_cols.push(col);
        then(self);
        self.right_cols.pop();
    }

    /// Runs `then` with column `col` left of the part, its interval from extension `at`.
    fn left_with(&mut self, col: Col, at: Option<u32>, then: impl FnOnce(&mut Self)) {
        self.at = at;
        self.left_cols.push(col);
        then(self);
        self.left_cols.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::{BTreeMap, BTreeSet};

    use crate::search::no_hit::bounds;
    use crate::search::seeded::{both_strands, genome_with_repeats, indexed, read_with_edits, xorshift};

    /// The string an alignment matches.
    fn string_of(a: &Alignment) -> Vec<u8> {
        a.iter()
            .filter_map(|c| match *c {
                Col::Base(b) | Col::Del(b) => Some(b),
                Col::Ins => None,
            })
            .collect()
    }

    /// The alignments of `read` to `x` within `k` edits that neither start nor end with a
    /// deletion (a column per read base or string base; the pigeonhole searches never put a
    /// deletion before the read's first base or after its last).
    fn count_alignments(read: &[u8], x: &[u8], k: usize) -> u64 {
        let (n, m) = (read.len(), x.len());
        // ways[i][j][c]: read[..i] against x[..j] with c edits; `del` those ending in a deletion.
        let mut ways = vec![vec![vec![0u64; k + 1]; m + 1]; n + 1];
        let mut del = ways.clone();
        ways[0][0][0] = 1;
        for i in 0..=n {
            for j in 0..=m {
                for c in 0..=k {
                    if i > 0 && j > 0 {
                        let cost = (read[i - 1] != x[j - 1]) as usize;
                        if c >= cost {
                            ways[i][j][c] += ways[i - 1][j - 1][c - cost];
                        }
                    }
                    if i > 0 && c > 0 {
                        ways[i][j][c] += ways[i - 1][j][c - 1];
                    }
                    if j > 0 && c > 0 && i > 0 {
                        del[i][j][c] = ways[i][j - 1][c - 1];
                        ways[i][j][c] += del[i][j][c];
                    }
                }
            }
        }
        (0..=k).map(|c| ways[n][m][c] - del[n][m][c]).sum()
    }

    /// Draws `reads` reads (from `lens.0` bases, fewer than `lens.1` more; a fifth random, the
    /// rest with edits) of a seeded genome of `genome_len` bases with repeats, and runs `check`
    /// on each: its number, the BWT, both strands' text, the read and its bounds.
    fn for_reads(
        seed: u64,
        genome_len: usize,
        reads: usize,
        lens: (usize, u64),
        mut check: impl FnMut(usize, &Bwt, &[u8], &[u8], &Bounds),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(seed);
        let genome =
            genome_with_repeats(genome_len, 200..500, &[genome_len / 4, genome_len / 2, 3 * genome_len / 4], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        let text = both_strands(&genome);
        for r in 0..reads {
            let len = lens.0 + (next() % lens.1) as usize;
            let read = read_with_edits(&text, len, r % 5 == 0, 6, &mut next);
            let b = bounds(&bwt, &read, &mut 0);
            check(r, &bwt, &text, &read, &b);
        }
    }

    /// Without gaps the searches find every string within k mismatches of the read on either
    /// strand, each once, and nothing else: with repeats, N bases and reads of every kind.
    #[test]
    fn the_searches_find_every_string_within_k_mismatches_once() {
        let mut found_some = 0;
        for_reads(0x51f1_5eed_1234_abcd, 4000, 300, (8, 40), |r, bwt, text, read, b| {
            for k in 0..=3 {
                let Some((found, _, _)) = within(bwt, read, Budget::edits(k as u32, false), b, 32) else { continue };
                let mut strings: Vec<Vec<u8>> = found.iter().map(string_of).collect();
                let n = strings.len();
                strings.sort();
                strings.dedup();
                assert_eq!(strings.len(), n, "read {r}, k {k}: a string found twice");
                let want: BTreeSet<Vec<u8>> = text
                    .windows(read.len())
                    .filter(|w| w.iter().zip(read).filter(|(a, b)| a != b).count() <= k)
                    .map(|w| w.to_vec())
                    .collect();
                let got: BTreeSet<Vec<u8>> = strings.into_iter().collect();
                let extra: Vec<_> = got.difference(&want).collect();
                let missing: Vec<_> = want.difference(&got).collect();
                assert!(
                    extra.is_empty() && missing.is_empty(),
                    "read {r} {read:?}, k {k}: extra {extra:?} missing {missing:?}"
                );
                found_some += (n > 0) as usize;
            }
        });
        assert!(found_some > 300, "{found_some} searches found strings");
    }

    /// With gaps the searches find, for every string of the genome, every alignment of the
    /// read to it within k edits (none starting or ending with a deletion), and nothing else;
    /// an alignment may be found twice (a deletion between two parts).
    #[test]
    fn with_gaps_the_searches_find_every_alignment_within_k_edits() {
        let mut found_some = 0;
        for_reads(0x0dd_ba11_cafe_f00d, 1500, 60, (8, 16), |r, bwt, text, read, b| {
            for k in 0..=2 {
                let Some((found, _, _)) = within(bwt, read, Budget::edits(k as u32, true), b, 32) else { continue };
                let mut by_string: BTreeMap<Vec<u8>, BTreeSet<Alignment>> = BTreeMap::new();
                for a in found {
                    by_string.entry(string_of(&a)).or_default().insert(a);
                }
                let mut want = BTreeMap::new();
                for m in read.len().saturating_sub(k).max(1)..=read.len() + k {
                    for x in text.windows(m) {
                        let n = count_alignments(read, x, k);
                        if n > 0 {
                            want.insert(x.to_vec(), n);
                        }
                    }
                }
                let got: BTreeMap<Vec<u8>, u64> = by_string.iter().map(|(x, a)| (x.clone(), a.len() as u64)).collect();
                assert_eq!(got, want, "read {r} {read:?}, k {k}");
                found_some += (!got.is_empty()) as usize;
            }
        });
        assert!(found_some > 50, "{found_some} searches found alignments");
    }

    /// bwa's score of an alignment: its mismatches, and per run of inserted or deleted bases
    /// a gap open and an extension for each base after the first; and its gaps.
    fn score_of(read: &[u8], a: &Alignment, (s_mm, s_gapo, s_gape): (u32, u32, u32)) -> (u32, u32) {
        let (mut score, mut opens, mut i, mut last) = (0, 0, 0, None);
        for &c in a {
            let kind = match c {
                Col::Base(b) => {
                    score += if b == read[i] { 0 } else { s_mm };
                    i += 1;
                    None
                }
                Col::Ins => Some(0),
                Col::Del(_) => Some(1),
            };
            if kind.is_some() {
                i += (kind == Some(0)) as usize;
                (score, opens) = if last == kind { (score + s_gape, opens) } else { (score + s_gapo, opens + 1) };
            }
            last = kind;
        }
        (score, opens)
    }

    /// A score budget finds exactly the alignments within as many edits as it pays for whose
    /// score and gaps fit it.
    #[test]
    fn a_score_budget_finds_the_alignments_whose_score_fits() {
        let mut gapped = 0;
        for_reads(0x5c0_12e5_b00d_9e71, 3000, 150, (12, 30), |r, bwt, _, read, b| {
            for (score, max_gapo) in [(6, 1), (9, 0), (12, 1), (15, 2)] {
                let budget = Budget { score, s_mm: 3, s_gapo: 11, s_gape: 4, max_gapo, max_edits: u32::MAX };
                let Some((found, _, _)) = within(bwt, read, budget, b, 32) else { continue };
                let Some((all, _, _)) = within(bwt, read, Budget::edits(score / 3, max_gapo > 0), b, 32) else {
                    continue;
                };
                let fits = |a: &Alignment| {
                    let (s, o) = score_of(read, a, (3, 11, 4));
                    s <= score && o <= max_gapo
                };
                let want: BTreeSet<Alignment> = all.into_iter().filter(fits).collect();
                let got: BTreeSet<Alignment> = found.into_iter().collect();
                assert_eq!(got, want, "read {r} {read:?}, budget {budget:?}");
                gapped += got.iter().filter(|a| a.iter().any(|c| !matches!(c, Col::Base(_)))).count();
            }
        });
        assert!(gapped > 20, "{gapped} gapped alignments found");
    }
}
