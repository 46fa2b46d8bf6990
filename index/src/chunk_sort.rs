//! Sorting a chunk's suffixes elsewhere (the GPU): the interface, the chunk plan, the tie
//! refinement shared by every such sorter, and a CPU model of the GPU's pipeline.
//!
//! A [`ChunkSorter`] takes the suffixes of one chunk (consecutive buckets, rows in order) and
//! returns them sorted by their first 64 bases, each slot carrying its BWT character and a
//! flag saying that its 64 bases equal the previous slot's ([`TIED`]). The suffixes of a run
//! of tied slots are then put in their true order on the CPU by the difference cover's
//! comparison ([`refine_ties`]), exactly as the CPU build sorts a bucket's tied keys, so the
//! rows are those of the CPU build whatever the order the sorter left equal keys in.
//!
//! The index crate has no GPU code: `bcuda` implements the trait with CUDA kernels
//! (`src/gpu/index_sort.rs`, `cuda/suffix_sort.cu`); [`RadixModel`] is the same pipeline
//! step by step on the CPU (the same tiles, histograms, scan and scatter), so that CI, which
//! has no GPU, checks the pipeline's logic against the plain comparison sort.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::difference_cover::CoverRanks;
use crate::text::PackedText;

/// Errors of a sorter: the build reports them and goes on on the CPU.
pub type SortError = Box<dyn std::error::Error + Send + Sync>;

/// A sorted slot whose first 64 bases equal the previous slot's (bit 61: positions take at
/// most 61 bits here, the BWT character the top 2).
pub const TIED: u64 = 1 << 61;
/// A slot's position bits while [`TIED`] may be set.
pub const SLOT_POSITION: u64 = TIED - 1;

/// One chunk: buckets `lo..hi` of the first-`k`-bases buckets, whose rows (among the n
/// non-`$` rows) are `starts[lo]..starts[hi]`.
pub struct Chunk<'a> {
    /// The chunk's number in the plan (from 0) and the number of chunks.
    pub index: usize,
    pub count: usize,
    pub k: u32,
    pub lo: usize,
    pub hi: usize,
    /// The first row of every bucket and the end: `starts[b]` for b in 0..=4^k.
    pub starts: &'a [u64],
    /// The most positions any chunk of the plan that the sorter takes has (to size buffers once).
    pub largest: u64,
}

impl Chunk<'_> {
    pub fn first_row(&self) -> u64 {
        self.starts[self.lo]
    }

    pub fn len(&self) -> u64 {
        self.starts[self.hi] - self.starts[self.lo]
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Sorts chunks of suffixes by their first 64 bases (see the module's documentation).
pub trait ChunkSorter: Send {
    /// What sorts ("GPU 0, NVIDIA H100 80GB HBM3"), for the reports.
    fn name(&self) -> String;

    /// Takes the text (before any chunk) and counts the suffixes of each first-`k`-bases
    /// bucket (4^k counts, zeros past the end of the text as the CPU counts them), or returns
    /// `None` to leave the counting to the CPU.
    fn prepare(&mut self, text: &PackedText, k: u32) -> Result<Option<Vec<u64>>, SortError>;

    /// The most positions one chunk may have (after [`prepare`](Self::prepare)); larger
    /// chunks (one huge bucket) are sorted on the CPU.
    fn capacity(&self) -> u64;

    /// Writes the chunk's suffixes into `out` (`chunk.len()` slots), sorted by their first 64
    /// bases (zeros past the end of the text), each slot `pos | c << 62 | tied`: `c` is the
    /// BWT character `text[pos - 1]` (0 for pos 0) and `tied` is [`TIED`] when the slot's 64
    /// bases equal the previous slot's. Equal keys may come in any order.
    fn sort_chunk(&mut self, chunk: &Chunk, out: &mut [u64]) -> Result<(), SortError>;
}

/// Where the suffixes of a chunk were sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortedOn {
    Sorter,
    Cpu,
}

/// Consecutive buckets grouped into chunks of at most `max_positions` positions (a bucket
/// larger than that is a chunk of its own): `(lo, hi)` bucket ranges covering all buckets.
/// `starts` has 4^k + 1 entries (the last is n).
pub fn plan_chunks(starts: &[u64], max_positions: u64) -> Vec<(usize, usize)> {
    let n_buckets = starts.len() - 1;
    let max_positions = max_positions.max(1);
    let mut plan = Vec::new();
    let mut lo = 0usize;
    while lo < n_buckets {
        // Buckets lo..hi: at least one, and as many more as fit the budget.
        let base = starts[lo];
        let mut hi = lo + 1;
        while hi < n_buckets && starts[hi + 1] - base <= max_positions {
            hi += 1;
        }
        plan.push((lo, hi));
        lo = hi;
    }
    plan
}

/// Puts the runs of tied slots (see [`ChunkSorter::sort_chunk`]) in suffix order, as the CPU
/// build's bucket sort orders its tied keys ([`CoverRanks::sort_tied`]: from base 64 on, long
/// exact repeats read about once), and clears the [`TIED`] bits. Runs are sorted in
/// parallel, a long one in parallel too.
pub fn refine_ties(cover: &CoverRanks, slots: &mut [u64]) {
    slots.par_chunk_by_mut(|_, y| y & TIED != 0).for_each(|run| {
        for s in run.iter_mut() {
            *s &= !TIED;
        }
        cover.sort_tied(run, &|&s| s & SLOT_POSITION);
    });
}

/// The 64 bases at `p`, zeros past the end (the CPU build's bucket key; the GPU's too).
#[inline]
pub fn key_64(text: &PackedText, p: u64) -> u128 {
    let next = if p + 32 < text.len() { text.window(p + 32) } else { 0 };
    (text.window(p) as u128) << 64 | next as u128
}

/// The slot of a sorted suffix before its tie flag: its position and BWT character.
#[inline]
pub fn slot_of(text: &PackedText, pos: u64) -> u64 {
    let c = if pos == 0 { 0 } else { text.base(pos - 1) };
    pos | (c as u64) << 62
}

/// Elements per tile of the radix sort (the GPU's: a warp's share of a pass).
pub const RADIX_TILE: usize = 4096;

/// The GPU pipeline of `cuda/suffix_sort.cu`, kernel by kernel, on the CPU: bucket counts,
/// the chunk's positions gathered through per-bucket cursors (in an arbitrary order: here the
/// text is scanned backwards, as GPU threads may take them in any order), the 128-bit keys,
/// the digits that vary found first (a pass whose digit is the same for every key is
/// skipped), then per 8-bit digit from the lowest: tile histograms stored digit-major, their
/// exclusive scan, and a stable scatter; last the slots with their BWT character and tie flag.
pub struct RadixModel {
    text: Option<PackedText>,
    /// Elements per tile (small in tests, so that chunks have many tiles).
    pub tile: usize,
    /// Most positions per chunk (tests lower it to send some chunks to the CPU).
    pub capacity: u64,
    /// `sort_chunk` fails from this chunk on (fallback tests).
    pub fail_from: Option<usize>,
    /// Radix passes run and skipped, over all chunks.
    pub passes: (usize, usize),
}

impl RadixModel {
    pub fn new(tile: usize) -> RadixModel {
        RadixModel { text: None, tile: tile.max(1), capacity: u64::MAX, fail_from: None, passes: (0, 0) }
    }
}

/// Digit `d` (0 = lowest 8 bits) of a 128-bit key.
#[inline]
pub fn digit(key: u128, d: u32) -> usize {
    (key >> (8 * d) & 0xff) as usize
}

/// For each of the 16 digits, whether some two keys differ in it (a pass is needed).
pub fn varying_digits(keys: &[u128]) -> [bool; 16] {
    let mut seen = [[false; 256]; 16];
    for &key in keys {
        for (d, s) in seen.iter_mut().enumerate() {
            s[digit(key, d as u32)] = true;
        }
    }
    std::array::from_fn(|d| seen[d].iter().filter(|&&x| x).count() > 1)
}

/// One stable LSD pass over digit `d` the GPU's way: `hist[v * tiles + t]` counts digit
/// value v in tile t, its exclusive scan gives each (value, tile) its first output slot,
/// and each tile writes its elements there in order.
pub fn radix_pass(keys: &[u128], vals: &[u64], keys_out: &mut [u128], vals_out: &mut [u64], d: u32, tile: usize) {
    let m = keys.len();
    let tiles = m.div_ceil(tile);
    let mut hist = vec![0u32; 256 * tiles];
    for t in 0..tiles {
        for &key in &keys[t * tile..((t + 1) * tile).min(m)] {
            hist[digit(key, d) * tiles + t] += 1;
        }
    }
    let mut sum = 0u32;
    for h in hist.iter_mut() {
        (*h, sum) = (sum, sum + *h);
    }
    for t in 0..tiles {
        for j in t * tile..((t + 1) * tile).min(m) {
            let slot = &mut hist[digit(keys[j], d) * tiles + t];
            keys_out[*slot as usize] = keys[j];
            vals_out[*slot as usize] = vals[j];
            *slot += 1;
        }
    }
}

impl ChunkSorter for RadixModel {
    fn name(&self) -> String {
        "CPU model of the GPU sort".to_string()
    }

    fn prepare(&mut self, text: &PackedText, k: u32) -> Result<Option<Vec<u64>>, SortError> {
        let mut counts = vec![0u64; 1 << (2 * k)];
        for i in 0..text.len() {
            counts[(text.window(i) >> (64 - 2 * k)) as usize] += 1;
        }
        self.text = Some(text.clone());
        Ok(Some(counts))
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn sort_chunk(&mut self, chunk: &Chunk, out: &mut [u64]) -> Result<(), SortError> {
        if self.fail_from.is_some_and(|f| chunk.index >= f) {
            return Err(format!("chunk {} failed on purpose", chunk.index).into());
        }
        let text = self.text.as_ref().ok_or("sort_chunk before prepare")?;
        let (k, base, m) = (chunk.k, chunk.first_row(), chunk.len() as usize);
        if m as u64 > self.capacity || out.len() != m {
            return Err(format!("chunk of {m} positions, capacity {}, output {}", self.capacity, out.len()).into());
        }
        // gather: a cursor per bucket, starting at the bucket's first slot in the chunk.
        let mut cursor: Vec<u64> = chunk.starts[chunk.lo..chunk.hi].iter().map(|&s| s - base).collect();
        let mut vals = vec![0u64; m];
        for i in (0..text.len()).rev() {
            let b = (text.window(i) >> (64 - 2 * k)) as usize;
            if (chunk.lo..chunk.hi).contains(&b) {
                let c = &mut cursor[b - chunk.lo];
                vals[*c as usize] = i;
                *c += 1;
            }
        }
        let mut keys: Vec<u128> = vals.iter().map(|&p| key_64(text, p)).collect();
        let varying = varying_digits(&keys);
        let (mut keys_alt, mut vals_alt) = (vec![0u128; m], vec![0u64; m]);
        for (d, &varies) in varying.iter().enumerate() {
            if !varies {
                self.passes.1 += 1;
                continue;
            }
            self.passes.0 += 1;
            radix_pass(&keys, &vals, &mut keys_alt, &mut vals_alt, d as u32, self.tile);
            std::mem::swap(&mut keys, &mut keys_alt);
            std::mem::swap(&mut vals, &mut vals_alt);
        }
        for j in 0..m {
            let tied = j > 0 && keys[j] == keys[j - 1];
            out[j] = slot_of(text, vals[j]) | if tied { TIED } else { 0 };
        }
        Ok(())
    }
}

/// Compares two slots' suffixes with the plain comparison (tests).
pub fn plain_order(text: &PackedText, a: u64, b: u64) -> Ordering {
    crate::text::compare_suffixes(text, a & SLOT_POSITION, b & SLOT_POSITION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::difference_cover::DEFAULT_COVER_ROOT;
    use crate::text::tests::text_of;

    #[test]
    fn plan_covers_every_bucket_in_order_within_the_budget() {
        // Bucket sizes 3, 0, 5, 1, 9 (one over the budget), 2, 2.
        let sizes = [3u64, 0, 5, 1, 9, 2, 2];
        let mut starts = vec![0u64];
        for s in sizes {
            starts.push(starts.last().unwrap() + s);
        }
        let plan = plan_chunks(&starts, 6);
        assert_eq!(plan, vec![(0, 2), (2, 4), (4, 5), (5, 7)]);
        for budget in 1..=30 {
            let plan = plan_chunks(&starts, budget);
            assert_eq!(plan.first().unwrap().0, 0);
            assert_eq!(plan.last().unwrap().1, sizes.len());
            for w in plan.windows(2) {
                assert_eq!(w[0].1, w[1].0);
            }
            for &(lo, hi) in &plan {
                assert!(hi > lo);
                // Within the budget, unless the chunk is a single bucket.
                assert!(starts[hi] - starts[lo] <= budget || hi == lo + 1, "budget {budget} chunk {lo}..{hi}");
                // Greedy: the next bucket would not have fitted.
                if hi < sizes.len() {
                    assert!(starts[hi + 1] - starts[lo] > budget);
                }
            }
        }
        assert_eq!(plan_chunks(&starts, 1000), vec![(0, sizes.len())]);
    }

    #[test]
    fn radix_pass_is_a_stable_counting_sort() {
        let mut state = 5u64;
        let keys: Vec<u128> = (0..1000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 40) as u128 * 0x1_0000_0001
            })
            .collect();
        let vals: Vec<u64> = (0..1000).collect();
        for tile in [1, 7, 64, 4096] {
            for d in [0, 1, 4, 15] {
                let (mut ko, mut vo) = (vec![0u128; 1000], vec![0u64; 1000]);
                radix_pass(&keys, &vals, &mut ko, &mut vo, d, tile);
                let mut expect: Vec<(u128, u64)> = keys.iter().copied().zip(vals.iter().copied()).collect();
                expect.sort_by_key(|&(k, _)| digit(k, d));
                assert_eq!(
                    ko.iter().copied().zip(vo.iter().copied()).collect::<Vec<_>>(),
                    expect,
                    "tile {tile} digit {d}"
                );
            }
        }
    }

    #[test]
    fn varying_digits_finds_the_passes_needed() {
        let keys = [0x0102_0000u128, 0x0103_00ff];
        let v = varying_digits(&keys);
        assert_eq!(v.iter().filter(|&&x| x).count(), 2);
        assert!(v[0] && v[2] && !v[1] && !v[3]);
        assert!(!varying_digits(&[7u128, 7, 7]).iter().any(|&x| x));
    }

    /// The model's chunks, refined, are the plain comparison sort's order of the chunk.
    #[test]
    fn model_chunk_then_refinement_is_the_suffix_order() {
        let mut state = 3u64;
        let mut seq: Vec<u8> = (0..3000)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if i % 5 == 0 {
                    (state >> 62) as u8
                } else {
                    0
                }
            })
            .collect();
        let unit: Vec<u8> = seq[100..111].to_vec();
        seq.extend(unit.iter().cycle().take(900));
        let t = text_of(&seq);
        let cover = CoverRanks::build(&t, 4);
        let k = 2;
        let mut model = RadixModel::new(16);
        let counts = model.prepare(&t, k).unwrap().unwrap();
        let mut starts = vec![0u64];
        for c in counts {
            starts.push(starts.last().unwrap() + c);
        }
        let plan = plan_chunks(&starts, 700);
        for (i, &(lo, hi)) in plan.iter().enumerate() {
            let chunk = Chunk { index: i, count: plan.len(), k, lo, hi, starts: &starts, largest: 0 };
            let mut out = vec![0u64; chunk.len() as usize];
            model.sort_chunk(&chunk, &mut out).unwrap();
            assert!(out.windows(2).all(|w| (w[0] & SLOT_POSITION) != (w[1] & SLOT_POSITION)));
            refine_ties(&cover, &mut out);
            let mut expect = out.clone();
            expect.sort_by(|&a, &b| plain_order(&t, a, b));
            assert_eq!(out, expect, "chunk {i}");
            for &s in &out {
                assert_eq!(s, slot_of(&t, s & SLOT_POSITION));
            }
        }
        assert!(model.passes.1 > 0, "some digits are constant in a chunk: {:?}", model.passes);
        let _ = DEFAULT_COVER_ROOT;
    }
}
