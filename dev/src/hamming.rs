//! Every string within `k` mismatches of a read that occurs in the genome (either strand),
//! found by pigeonhole searches over the bidirectional index bwa's BWT of both strands is: the
//! candidates whose paths bwa's search would walk (docs/gpu-search.md, "Candidates from
//! pigeonhole searches"). The read is cut into `k + 1` parts, one of which any such string
//! matches exactly. Search j matches part j exactly, extends it to the right over the parts
//! after it, then to the left over those before it, each of which must hold a mismatch (a
//! string with one of them exact is an earlier search's), so every string is found once. The
//! read's bounds (src/search/no_hit.rs, like bwa's D array) prune both directions.

use bcuda::search::no_hit::{exact_part, extend, part_of, part_start, BiInterval, Bounds};
use bcuda_index::Bwt;

/// A string found: its mismatches against the read, as (position, base), in no set order.
pub type Substitutions = Vec<(usize, u8)>;

struct Enumeration<'a> {
    bwt: &'a Bwt,
    read: &'a [u8],
    bounds: &'a Bounds,
    k: usize,
    parts: usize,
    /// Search j's first position, and the mismatches the parts before it need.
    start: usize,
    before_start: usize,
    subs: Substitutions,
    found: Vec<Substitutions>,
    lookups: u64,
}

/// The strings within `k` mismatches of `read` (codes, N as 4, which matches no base) and the
/// occurrence lookups spent; None where the read has fewer bases than parts.
pub fn within(bwt: &Bwt, read: &[u8], k: usize, bounds: &Bounds) -> Option<(Vec<Substitutions>, u64)> {
    let (len, parts) = (read.len(), k + 1);
    if len < parts {
        return None;
    }
    let mut e = Enumeration {
        bwt,
        read,
        bounds,
        k,
        parts,
        start: 0,
        before_start: 0,
        subs: Vec::new(),
        found: Vec::new(),
        lookups: 0,
    };
    for j in 0..parts {
        let end = if j + 1 < parts { part_start(j + 1, len, parts) } else { len };
        e.start = part_start(j, len, parts);
        e.before_start = (bounds.before[e.start] as usize).max(j);
        if let Some(ik) = exact_part(bwt, read, e.start, end, &mut e.lookups) {
            e.right(ik, end, 0);
        }
    }
    Some((e.found, e.lookups))
}

impl Enumeration<'_> {
    /// Extends `ik` over read[i..] with `used` mismatches spent, then turns left.
    fn right(&mut self, ik: BiInterval, i: usize, used: usize) {
        if used + self.bounds.after[i] as usize + self.before_start > self.k {
            return;
        }
        if i == self.read.len() {
            return self.left(ik, self.start, used, 0);
        }
        // Appended: entry c is W·(3 - c).
        let kids = extend(self.bwt, &ik, false, &mut self.lookups);
        for b in 0..4u8 {
            let child = kids[3 - b as usize];
            let cost = (b != self.read[i]) as usize;
            if child.size > 0 && used + cost <= self.k {
                self.take(i, b, cost, |e| e.right(child, i + 1, used + cost));
            }
        }
    }

    /// Extends `ik` over read[..i] with `used` mismatches spent, `part_edits` of them in the
    /// part of read[i - 1]; a part it finishes must hold one.
    fn left(&mut self, ik: BiInterval, i: usize, used: usize, part_edits: usize) {
        if i == 0 {
            self.found.push(self.subs.clone());
            return;
        }
        let (len, parts) = (self.read.len(), self.parts);
        let part = part_of(i - 1, len, parts);
        let open = part + (part_edits == 0) as usize;
        if used + (self.bounds.before[i] as usize).max(open) > self.k {
            return;
        }
        let finishes = part_start(part, len, parts) == i - 1;
        // Prepended: entry c is c·W.
        let kids = extend(self.bwt, &ik, true, &mut self.lookups);
        for b in 0..4u8 {
            let child = kids[b as usize];
            let cost = (b != self.read[i - 1]) as usize;
            let edits = part_edits + cost;
            if child.size > 0 && used + cost <= self.k && !(finishes && edits == 0) {
                let next = if finishes { 0 } else { edits };
                self.take(i - 1, b, cost, |e| e.left(child, i - 1, used + cost, next));
            }
        }
    }

    /// Runs `then` with base `b` at read position `i` among the string's mismatches if it is one.
    fn take(&mut self, i: usize, b: u8, cost: usize, then: impl FnOnce(&mut Self)) {
        if cost > 0 {
            self.subs.push((i, b));
        }
        then(self);
        if cost > 0 {
            self.subs.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::BTreeSet;

    use bcuda::search::no_hit::bounds;
    use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};

    /// Every string within `k` mismatches of `read` that occurs in `text`, as its mismatches.
    fn brute_force(read: &[u8], text: &[u8], k: usize) -> BTreeSet<Substitutions> {
        text.windows(read.len())
            .filter_map(|w| {
                let subs: Substitutions = (0..read.len()).filter(|&i| w[i] != read[i]).map(|i| (i, w[i])).collect();
                (subs.len() <= k).then_some(subs)
            })
            .collect()
    }

    /// The pigeonhole searches find every string within k mismatches of the read on either
    /// strand, each once, and nothing else: with repeats, N bases and reads of every kind.
    #[test]
    fn the_searches_find_every_string_within_k_mismatches_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x51f1_5eed_1234_abcd);
        let genome = genome_with_repeats(4000, 200..500, &[1000, 2500, 3300], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        let text: Vec<u8> = genome.iter().copied().chain(genome.iter().rev().map(|&c| 3 - c)).collect();
        let mut found_some = 0;
        for r in 0..300 {
            let len = 8 + (next() % 40) as usize;
            let read = read_with_edits(&text, len, r % 5 == 0, 6, &mut next);
            let mut lookups = 0;
            let b = bounds(&bwt, &read, &mut lookups);
            for k in 0..=3 {
                let Some((strings, _)) = within(&bwt, &read, k, &b) else { continue };
                let mut set: Vec<Substitutions> = strings
                    .into_iter()
                    .map(|mut s| {
                        s.sort_unstable();
                        s
                    })
                    .collect();
                let n = set.len();
                set.sort();
                set.dedup();
                assert_eq!(set.len(), n, "read {r}, k {k}: a string found twice");
                let want = brute_force(&read, &text, k);
                assert_eq!(set.into_iter().collect::<BTreeSet<_>>(), want, "read {r} {read:?}, k {k}");
                found_some += (n > 0) as usize;
            }
        }
        assert!(found_some > 300, "{found_some} searches found strings");
    }
}
