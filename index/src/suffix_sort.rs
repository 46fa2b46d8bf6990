//! BWT and sampled suffix array by a bucketed, multi-pass suffix sort with bounded memory.
//!
//! Suffixes are grouped by their first `K` bases (a bucket per K-mer). Consecutive buckets are
//! taken in chunks whose positions fit `budget_bytes`; for each chunk one pass over the text
//! collects its suffix positions, which are sorted by comparing 32-base words. Rows come out
//! in order, so each sorted position gives its BWT character (`text[pos-1]`) and, every 32nd
//! row, its suffix-array sample directly. Memory: the 2-bit text (n/4 bytes), the BWT (n/4),
//! the samples (n/4 for interval 32), the bucket counts (8 * 4^K) and one chunk (8 bytes per
//! position), whatever the genome size.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::text::PackedText;

/// The BWT without its `$` (row `primary`), 16 bases per u32 with the first in the high bits,
/// and the suffix-array samples of rows `interval, 2*interval, ...`.
pub struct BwtAndSamples {
    pub primary: u64,
    pub bwt: Vec<u32>,
    pub samples: Vec<u64>,
}

/// Rows between suffix-array samples (bwa's default and the only value it writes).
pub const SA_INTERVAL: u64 = 32;

/// Compares the suffixes starting at `a` and `b` (`a != b`); the end of the text sorts first.
pub fn compare_suffixes(text: &PackedText, mut a: u64, mut b: u64) -> Ordering {
    let n = text.len();
    loop {
        let (ra, rb) = (n - a, n - b);
        let m = ra.min(rb).min(32);
        if m > 0 {
            let keep = !0u64 << (64 - 2 * m);
            let (wa, wb) = (text.window(a) & keep, text.window(b) & keep);
            if wa != wb {
                return wa.cmp(&wb);
            }
        }
        if m < 32 {
            return ra.cmp(&rb);
        }
        a += 32;
        b += 32;
    }
}

/// Prefix length of the buckets: about one bucket per 64 suffixes, at most 12 bases.
fn bucket_bases(n: u64) -> u32 {
    let mut k = 1;
    while k < 12 && 4u64.pow(k) * 64 < n {
        k += 1;
    }
    k
}

/// Sorts all suffixes of `text` (plus the `$` suffix, row 0) chunk by chunk.
/// `progress` is called with the number of rows done so far.
pub fn build(text: &PackedText, budget_bytes: u64, mut progress: impl FnMut(u64)) -> BwtAndSamples {
    let n = text.len();
    let k = bucket_bases(n);
    let bucket_of = |i: u64| (text.window(i) >> (64 - 2 * k)) as usize;

    let mut counts = vec![0u64; 1 << (2 * k)];
    for i in 0..n {
        counts[bucket_of(i)] += 1;
    }

    let max_positions = (budget_bytes / 8).max(1);
    let mut bwt = vec![0u32; (n as usize).div_ceil(16)];
    let mut samples = vec![0u64; (n / SA_INTERVAL) as usize];
    // Row 0 is the `$` suffix: its BWT character is the last base of the text.
    put_base(&mut bwt, 0, text.base(n - 1));
    let mut primary = None;
    let mut row = 1u64;
    let mut lo = 0usize;
    while lo < counts.len() {
        let mut hi = lo;
        let mut size = 0u64;
        while hi < counts.len() && (hi == lo || size + counts[hi] <= max_positions) {
            size += counts[hi];
            hi += 1;
        }
        const SEGMENT: u64 = 1 << 20;
        let mut positions: Vec<u64> = (0..n.div_ceil(SEGMENT))
            .into_par_iter()
            .flat_map_iter(|s| (s * SEGMENT..((s + 1) * SEGMENT).min(n)).filter(|&i| (lo..hi).contains(&bucket_of(i))))
            .collect();
        positions.par_sort_unstable_by(|&a, &b| compare_suffixes(text, a, b));
        for &pos in &positions {
            if row % SA_INTERVAL == 0 {
                samples[(row / SA_INTERVAL - 1) as usize] = pos;
            }
            if pos == 0 {
                primary = Some(row);
            } else {
                let x = row - primary.is_some() as u64;
                put_base(&mut bwt, x, text.base(pos - 1));
            }
            row += 1;
        }
        progress(row);
        lo = hi;
    }
    debug_assert_eq!(row, n + 1);
    BwtAndSamples { primary: primary.expect("the text's first suffix is always sorted"), bwt, samples }
}

#[inline]
fn put_base(bwt: &mut [u32], x: u64, c: u8) {
    bwt[(x >> 4) as usize] |= (c as u32) << ((15 - (x & 15)) * 2);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::ForwardBases;

    fn text_of(s: &[u8]) -> PackedText {
        let mut f = ForwardBases::default();
        for &c in s {
            f.push(c);
        }
        PackedText::with_reverse_complement(&f)
    }

    fn naive_rows(t: &PackedText) -> Vec<u64> {
        let seq: Vec<u8> = (0..t.len()).map(|i| t.base(i)).collect();
        let mut rows: Vec<u64> = (0..=t.len()).collect();
        rows.sort_by(|&a, &b| seq[a as usize..].cmp(&seq[b as usize..]));
        rows
    }

    #[test]
    fn matches_naive_suffix_sort_with_tiny_chunks() {
        let mut state = 7u64;
        for len in [1usize, 2, 3, 17, 40, 100, 333] {
            let seq: Vec<u8> = (0..len)
                .map(|i| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    // Low-entropy text (mostly A) makes long common prefixes and runs past the end.
                    if i % 7 == 0 { (state >> 62) as u8 } else { 0 }
                })
                .collect();
            let t = text_of(&seq);
            let rows = naive_rows(&t);
            for budget in [8, 64, 1 << 20] {
                let out = build(&t, budget, |_| {});
                let primary = rows.iter().position(|&p| p == 0).unwrap() as u64;
                assert_eq!(out.primary, primary, "len {len}");
                for (r, &p) in rows.iter().enumerate().skip(1) {
                    if r as u64 % SA_INTERVAL == 0 {
                        assert_eq!(out.samples[r / SA_INTERVAL as usize - 1], p);
                    }
                }
                let bwt_chars: Vec<u8> = rows.iter().filter(|&&p| p != 0).map(|&p| if p == t.len() { t.base(t.len() - 1) } else { t.base(p - 1) }).collect();
                for (x, &c) in bwt_chars.iter().enumerate() {
                    assert_eq!((out.bwt[x >> 4] >> ((15 - (x & 15)) * 2) & 3) as u8, c, "len {len} budget {budget} x {x}");
                }
            }
        }
    }
}
