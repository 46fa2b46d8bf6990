//! BWT and sampled suffix array by a bucketed, multi-pass suffix sort with bounded memory.
//!
//! Suffixes are grouped by their first `K` bases (a bucket per K-mer); a counting pass gives
//! each bucket's first row. Consecutive buckets are taken in chunks whose positions fit
//! `budget_bytes`; a chunk's positions are written straight into their buckets' slots of one
//! array of the chunk's exact size (each thread owns a range of buckets and scans the text),
//! then each bucket is sorted by comparing 32-base words. Rows come out in order, so each
//! sorted position gives its BWT character (`text[pos-1]`) and, every 32nd row, its
//! suffix-array sample directly. Memory: the 2-bit text (n/4 bytes), the BWT (n/4), the samples
//! (n/4 for interval 32), the bucket starts (8 * 4^K) and one chunk (8 bytes per position),
//! whatever the genome size. No per-thread buffers are gathered into the chunk: rayon's
//! `collect` of a filtered iterator did that, and the allocator kept the freed buffers, so
//! from the second chunk on the peak held two chunks.

use std::time::Instant;

use rayon::prelude::*;

use crate::chunk_sort::{key_64, plan_chunks, refine_ties, slot_of, Chunk, ChunkSorter, SortedOn, SLOT_POSITION};
use crate::difference_cover::{CoverRanks, DEFAULT_COVER_ROOT};
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

/// Prefix length of the buckets: about one bucket per 64 suffixes, at most 12 bases.
pub fn bucket_bases(n: u64) -> u32 {
    let mut k = 1;
    while k < 12 && 4u64.pow(k) * 64 < n {
        k += 1;
    }
    k
}

/// Sorts all suffixes of `text` (plus the `$` suffix, row 0) chunk by chunk.
/// `progress` is called with the number of rows done so far.
pub fn build(text: &PackedText, budget_bytes: u64, progress: impl FnMut(u64)) -> BwtAndSamples {
    build_with_cover(text, budget_bytes, DEFAULT_COVER_ROOT, progress)
}

/// [`build`] with the difference cover of v = `cover_root`^2 (small ones exercise it in tests).
fn build_with_cover(
    text: &PackedText,
    budget_bytes: u64,
    cover_root: u64,
    mut progress: impl FnMut(u64),
) -> BwtAndSamples {
    let n = text.len();
    assert!(n <= POSITION_BITS, "text too long for the chunk slots");
    // Bounds every comparison below (long exact repeats would otherwise cost their length).
    let cover = CoverRanks::build(text, cover_root);
    let k = bucket_bases(n);
    let n_buckets = 1usize << (2 * k);

    // starts[b]: the first row (among the n non-`$` rows) of bucket b, and n after the last
    // bucket.
    let mut starts = vec![0u64; n_buckets + 1];
    for b in text.kmer_codes(k) {
        starts[b as usize + 1] += 1;
    }
    for b in 1..=n_buckets {
        starts[b] += starts[b - 1];
    }

    let mut rows = Rows::new(text);
    for (lo, hi) in plan_chunks(&starts, budget_bytes / 8) {
        // The chunk is allocated once at its exact size; each position goes straight to its
        // slot in its bucket. While it is filled, a bucket's cursor is its next free slot, so
        // afterwards it is the bucket's end.
        let base = starts[lo];
        let mut positions = vec![0u64; (starts[hi] - base) as usize];
        let mut cursors = starts[lo..hi].to_vec();
        fill_chunk(text, k, lo, &mut positions, &mut cursors, base);
        sort_buckets(&cover, &mut positions, base, &cursors);
        rows.push(&positions);
        progress(rows.row);
    }
    rows.finish()
}

/// The rows in order, as chunks of sorted slots come: the BWT, the `$` row and the samples.
struct Rows {
    n: u64,
    bwt: Vec<u32>,
    samples: Vec<u64>,
    primary: Option<u64>,
    /// The next row (row 0 is the `$` suffix).
    row: u64,
}

impl Rows {
    fn new(text: &PackedText) -> Rows {
        let n = text.len();
        let mut bwt = vec![0u32; (n as usize).div_ceil(16)];
        // Row 0 is the `$` suffix: its BWT character is the last base of the text.
        put_base(&mut bwt, 0, text.base(n - 1));
        Rows { n, bwt, samples: vec![0u64; (n / SA_INTERVAL) as usize], primary: None, row: 1 }
    }

    /// Writes a chunk's rows: each slot already carries its BWT character. In parallel: the
    /// samples by their rows, the BWT by its words (each word gathers its 16 slots; the first
    /// may hold bases of the chunk before, kept by OR).
    fn push(&mut self, slots: &[u64]) {
        use rayon::prelude::*;
        if slots.is_empty() {
            return;
        }
        let (row0, len) = (self.row, slots.len() as u64);
        let before = self.primary.is_some() as u64;
        let here = if before == 0 { slots.par_iter().position_any(|&s| s & POSITION_BITS == 0) } else { None };
        if let Some(at) = here {
            self.primary = Some(row0 + at as u64);
        }
        // Rows that are multiples of SA_INTERVAL: sample r / SA_INTERVAL - 1.
        let (first, end) = ((row0.div_ceil(SA_INTERVAL) - 1) as usize, ((row0 + len - 1) / SA_INTERVAL) as usize);
        self.samples[first..end].par_iter_mut().with_min_len(1 << 12).enumerate().for_each(|(i, sample)| {
            *sample = slots[(((first + i + 1) as u64) * SA_INTERVAL - row0) as usize] & POSITION_BITS;
        });
        // BWT x is the row less one after the `$` row `primary` (which has no BWT base).
        let x_start = row0 - before;
        let x_end = x_start + len - here.is_some() as u64;
        let slot_at = |x: u64| -> usize {
            let j = x - x_start;
            (match here {
                Some(at) if j >= at as u64 => j + 1,
                _ => j,
            }) as usize
        };
        let w_lo = (x_start / 16) as usize;
        self.bwt[w_lo..x_end.div_ceil(16) as usize].par_iter_mut().with_min_len(1 << 12).enumerate().for_each(
            |(k, word)| {
                let w = (w_lo + k) as u64 * 16;
                let mut bases = 0u32;
                for x in w.max(x_start)..(w + 16).min(x_end) {
                    bases |= ((slots[slot_at(x)] >> 62) as u32) << ((15 - (x & 15)) * 2);
                }
                *word |= bases;
            },
        );
        self.row += len;
    }

    fn finish(self) -> BwtAndSamples {
        debug_assert_eq!(self.row, self.n + 1);
        BwtAndSamples {
            primary: self.primary.expect("the text's first suffix is always sorted"),
            bwt: self.bwt,
            samples: self.samples,
        }
    }
}

/// Where the time of a build with a [`ChunkSorter`] went (seconds), and how its chunks were sorted.
#[derive(Clone, Debug, Default)]
pub struct SortStats {
    pub sorter: String,
    /// Ranking the difference-cover sample (CPU), while the sorter took the text and counted.
    pub cover_s: f64,
    /// The sorter's preparation (copying the text, counting the buckets), beside the cover.
    pub prepare_s: f64,
    /// Counting the buckets on the CPU (when the sorter did not).
    pub count_s: f64,
    /// Chunks sorted by the sorter: its time, and the CPU's refinement of tied keys.
    pub sorter_chunks: usize,
    pub sorter_s: f64,
    pub refine_s: f64,
    /// Chunks sorted on the CPU (after a failure, or a bucket larger than the sorter takes).
    pub cpu_chunks: usize,
    pub cpu_s: f64,
    /// The row loop (BWT, samples), beside the next chunk's sort, and its waits for chunks.
    pub rows_s: f64,
    pub wait_s: f64,
    /// Positions sorted by the sorter (for its rate).
    pub sorter_positions: u64,
}

/// A chunk done, for progress reports.
#[derive(Clone, Debug)]
pub struct ChunkDone {
    pub index: usize,
    pub count: usize,
    pub positions: u64,
    pub on: SortedOn,
    /// Seconds of the sort (the sorter's, or the CPU's fill and sort) and of the tie refinement.
    pub sort_s: f64,
    pub refine_s: f64,
    /// Rows done so far, of n + 1.
    pub rows_done: u64,
}

/// What a build with a sorter reports as it goes.
#[derive(Clone, Debug)]
pub enum SortEvent {
    /// The sorter failed (from chunk `chunk`, from 0; `None`: before the first): the CPU
    /// sorts the chunks left.
    Fallback {
        chunk: Option<usize>,
        reason: String,
    },
    Chunk(ChunkDone),
    Done(SortStats),
}

/// [`build`] with the chunks sorted by `sorter` (the GPU), the tied keys refined on the CPU:
/// the same rows. Three chunks are in flight: while the row loop takes one, the ties of the
/// next are refined (CPU) and the one after is sorted (the sorter, which so does not wait for
/// the refinement): each gets a third of `budget_bytes`. A sorter error sends this chunk and
/// the rest to the CPU ([`SortEvent::Fallback`]).
pub fn build_with_sorter(
    text: &PackedText,
    budget_bytes: u64,
    sorter: Box<dyn ChunkSorter>,
    events: &mut dyn FnMut(&SortEvent),
) -> BwtAndSamples {
    build_with_sorter_cover(text, budget_bytes, DEFAULT_COVER_ROOT, sorter, events)
}

/// A sorted chunk on its way to the row loop.
struct Sorted {
    index: usize,
    slots: Vec<u64>,
    on: SortedOn,
    sort_s: f64,
    refine_s: f64,
    fallback: Option<String>,
}

impl SortStats {
    /// Counts a chunk that reached the row loop.
    fn add(&mut self, sorted: &Sorted, positions: u64) {
        match sorted.on {
            SortedOn::Sorter => {
                self.sorter_chunks += 1;
                self.sorter_s += sorted.sort_s;
                self.refine_s += sorted.refine_s;
                self.sorter_positions += positions;
            }
            SortedOn::Cpu => {
                self.cpu_chunks += 1;
                self.cpu_s += sorted.sort_s;
            }
        }
    }
}

/// The sorter takes the text and counts the buckets while the CPU ranks the cover sample.
/// Returns the cover's ranks, the sorter (none when it failed: the CPU sorts every chunk) and
/// the bucket counts (none when the sorter did not count them).
fn prepare_sorter<'t>(
    text: &'t PackedText,
    k: u32,
    cover_root: u64,
    mut sorter: Box<dyn ChunkSorter>,
    stats: &mut SortStats,
    events: &mut dyn FnMut(&SortEvent),
) -> (CoverRanks<'t>, Option<Box<dyn ChunkSorter>>, Option<Vec<u64>>) {
    let n = text.len();
    let n_buckets = 1usize << (2 * k);
    let (cover, prepared) = std::thread::scope(|s| {
        let preparing = s.spawn(|| {
            let t = Instant::now();
            (sorter.prepare(text, k), t.elapsed().as_secs_f64())
        });
        let t = Instant::now();
        let cover = CoverRanks::build(text, cover_root);
        stats.cover_s = t.elapsed().as_secs_f64();
        let (prepared, prepare_s) = preparing.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        stats.prepare_s = prepare_s;
        (cover, prepared)
    });
    match prepared {
        Ok(Some(counts)) if counts.len() == n_buckets && counts.iter().sum::<u64>() == n => {
            (cover, Some(sorter), Some(counts))
        }
        Ok(Some(counts)) => {
            let reason = format!(
                "{} bucket counts adding up to {}, expected {n_buckets} adding up to {n}",
                counts.len(),
                counts.iter().sum::<u64>()
            );
            events(&SortEvent::Fallback { chunk: None, reason });
            (cover, None, None)
        }
        Ok(None) => (cover, Some(sorter), None),
        Err(e) => {
            events(&SortEvent::Fallback { chunk: None, reason: e.to_string() });
            (cover, None, None)
        }
    }
}

/// Each bucket's first row (and the text's length last), from `counts` or counted on the CPU.
fn bucket_starts(text: &PackedText, k: u32, counts: Option<Vec<u64>>, stats: &mut SortStats) -> Vec<u64> {
    let n_buckets = 1usize << (2 * k);
    let t = Instant::now();
    let mut starts = vec![0u64; n_buckets + 1];
    match counts {
        Some(counts) => starts[1..].copy_from_slice(&counts),
        None => {
            for b in text.kmer_codes(k) {
                starts[b as usize + 1] += 1;
            }
            stats.count_s = t.elapsed().as_secs_f64();
        }
    }
    for b in 1..=n_buckets {
        starts[b] += starts[b - 1];
    }
    assert_eq!(starts[n_buckets], text.len(), "bucket counts that do not add up to the text");
    starts
}

/// Sorts one chunk into `slots`: by the sorter when there is one and the chunk fits it, else
/// (or when the sorter fails: it is dropped, and the CPU sorts the chunks left) on the CPU.
fn sort_chunk(
    chunk: &Chunk,
    mut slots: Vec<u64>,
    sorter: &mut Option<Box<dyn ChunkSorter>>,
    capacity: u64,
    text: &PackedText,
    cover: &CoverRanks,
) -> Sorted {
    slots.clear();
    slots.resize(chunk.len() as usize, 0);
    let mut done = None;
    let mut fallback = None;
    if let Some(sorter_now) = sorter.as_mut().filter(|_| chunk.len() <= capacity) {
        let t = Instant::now();
        match sorter_now.sort_chunk(chunk, &mut slots) {
            Ok(()) => done = Some((SortedOn::Sorter, t.elapsed().as_secs_f64())),
            Err(e) => {
                fallback = Some(e.to_string());
                *sorter = None;
            }
        }
    }
    let (on, sort_s) = done.unwrap_or_else(|| {
        let t = Instant::now();
        let base = chunk.first_row();
        let mut cursors = chunk.starts[chunk.lo..chunk.hi].to_vec();
        fill_chunk(text, chunk.k, chunk.lo, &mut slots, &mut cursors, base);
        sort_buckets(cover, &mut slots, base, &cursors);
        (SortedOn::Cpu, t.elapsed().as_secs_f64())
    });
    Sorted { index: chunk.index, slots, on, sort_s, refine_s: 0.0, fallback }
}

fn build_with_sorter_cover(
    text: &PackedText,
    budget_bytes: u64,
    cover_root: u64,
    sorter: Box<dyn ChunkSorter>,
    events: &mut dyn FnMut(&SortEvent),
) -> BwtAndSamples {
    let n = text.len();
    assert!(n <= SLOT_POSITION, "text too long for the chunk slots");
    let k = bucket_bases(n);
    let mut stats = SortStats { sorter: sorter.name(), ..SortStats::default() };
    let (cover, mut sorter, counts) = prepare_sorter(text, k, cover_root, sorter, &mut stats, events);
    let starts = bucket_starts(text, k, counts, &mut stats);

    let plan = plan_chunks(&starts, budget_bytes / (8 * IN_FLIGHT as u64));
    let capacity = sorter.as_ref().map_or(0, |s| s.capacity());
    let chunk_len = |&(lo, hi): &(usize, usize)| starts[hi] - starts[lo];
    let largest = plan.iter().map(chunk_len).filter(|&len| len <= capacity).max().unwrap_or(0);
    let (sorted_tx, sorted_rx) = std::sync::mpsc::sync_channel::<Sorted>(0);
    let (unrefined_tx, unrefined_rx) = std::sync::mpsc::sync_channel::<Sorted>(0);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<u64>>();
    // Each at the largest chunk's size from the start: growing a Vec could double it.
    let most = plan.iter().map(chunk_len).max().unwrap_or(0) as usize;
    for _ in 0..IN_FLIGHT {
        free_tx.send(Vec::with_capacity(most)).expect("the receiver is here");
    }
    let mut rows = Rows::new(text);
    let (cover, starts, plan) = (&cover, &starts, &plan);
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            for (index, &(lo, hi)) in plan.iter().enumerate() {
                // A buffer comes back from the row loop (IN_FLIGHT circulate).
                let Ok(slots) = free_rx.recv() else { return };
                let chunk = Chunk { index, count: plan.len(), k, lo, hi, starts, largest };
                if unrefined_tx.send(sort_chunk(&chunk, slots, &mut sorter, capacity, text, cover)).is_err() {
                    return;
                }
            }
        });
        // The sorter's chunks get their ties refined here, while the sorter takes the next.
        let refiner = s.spawn(move || {
            for mut sorted in unrefined_rx {
                if sorted.on == SortedOn::Sorter {
                    let t = Instant::now();
                    refine_ties(cover, &mut sorted.slots);
                    sorted.refine_s = t.elapsed().as_secs_f64();
                }
                if sorted_tx.send(sorted).is_err() {
                    return;
                }
            }
        });
        loop {
            let t = Instant::now();
            let Ok(sorted) = sorted_rx.recv() else { break };
            stats.wait_s += t.elapsed().as_secs_f64();
            if let Some(reason) = &sorted.fallback {
                events(&SortEvent::Fallback { chunk: Some(sorted.index), reason: reason.clone() });
            }
            let t = Instant::now();
            rows.push(&sorted.slots);
            stats.rows_s += t.elapsed().as_secs_f64();
            let positions = sorted.slots.len() as u64;
            stats.add(&sorted, positions);
            let done = ChunkDone {
                index: sorted.index,
                count: plan.len(),
                positions,
                on: sorted.on,
                sort_s: sorted.sort_s,
                refine_s: sorted.refine_s,
                rows_done: rows.row,
            };
            let _ = free_tx.send(sorted.slots);
            events(&SortEvent::Chunk(done));
        }
        producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        refiner.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
    });
    assert_eq!(rows.row, n + 1, "every row sorted");
    events(&SortEvent::Done(stats));
    rows.finish()
}

/// Chunks held at once by a build with a sorter (being sorted, refined, and written as rows).
pub const IN_FLIGHT: usize = 3;

/// Puts the positions of buckets `lo..lo + cursors.len()` into their buckets' slots of
/// `positions` (whose first slot is row `base`); `cursors` are the buckets' start rows and end
/// as their end rows. The buckets are split into one part per thread; each part scans the whole
/// text and writes only its own slots, so threads share no cursor and no slot.
fn fill_chunk(text: &PackedText, k: u32, lo: usize, positions: &mut [u64], cursors: &mut [u64], base: u64) {
    let n = text.len();
    let n_parts = rayon::current_num_threads().max(1) as u64;
    let per_part = (positions.len() as u64).div_ceil(n_parts).max(1);
    let mut parts = Vec::new();
    let (mut cursors, mut positions, mut first_bucket, mut first_row) = (cursors, positions, lo, base);
    while !cursors.is_empty() {
        // Buckets up to the first one that reaches the part's share of positions.
        let mut m = 1;
        while m < cursors.len() && cursors[m] - first_row < per_part {
            m += 1;
        }
        let end_row = if m < cursors.len() { cursors[m] } else { first_row + positions.len() as u64 };
        let (c, c_rest) = std::mem::take(&mut cursors).split_at_mut(m);
        let (p, p_rest) = std::mem::take(&mut positions).split_at_mut((end_row - first_row) as usize);
        parts.push((first_bucket, c, p, first_row));
        (cursors, positions, first_bucket, first_row) = (c_rest, p_rest, first_bucket + m, end_row);
    }
    parts.into_par_iter().for_each(|(b0, cursors, positions, row0)| {
        let b1 = b0 + cursors.len();
        for (i, b) in (0..n).zip(text.kmer_codes(k)) {
            let b = b as usize;
            if (b0..b1).contains(&b) {
                let c = &mut cursors[b - b0];
                positions[(*c - row0) as usize] = i;
                *c += 1;
            }
        }
    });
}

/// Sorts each bucket of `part` (whose first slot is row `first`; `ends` are its buckets' end
/// rows), the buckets in parallel and a large bucket with a parallel sort.
fn sort_buckets(cover: &CoverRanks, part: &mut [u64], first: u64, ends: &[u64]) {
    if ends.len() == 1 && part.len() > SERIAL {
        sort_bucket(cover, part, &mut Vec::new());
    } else if part.len() <= SERIAL {
        let mut keyed = Vec::new();
        let mut from = 0;
        for &end in ends {
            let to = (end - first) as usize;
            sort_bucket(cover, &mut part[from..to], &mut keyed);
            from = to;
        }
    } else {
        let mid = ends.len() / 2;
        let split = ends[mid - 1] - first;
        let (left, right) = part.split_at_mut(split as usize);
        rayon::join(
            || sort_buckets(cover, left, first, &ends[..mid]),
            || sort_buckets(cover, right, first + split, &ends[mid..]),
        );
    }
}

/// Suffixes that one thread sorts alone; more are sorted in parallel.
const SERIAL: usize = 1 << 16;

/// Sorts one bucket by its suffixes' first 64 bases, read once per suffix (a comparison would
/// read two scattered windows each time), then the suffixes still tied by the cover's
/// comparison. `keyed` is scratch space (24 bytes per suffix) reused across buckets.
fn sort_bucket(cover: &CoverRanks, bucket: &mut [u64], keyed: &mut Vec<(u128, u64)>) {
    let text = cover.text();
    let position = |&(_, p): &(u128, u64)| p;
    keyed.clear();
    if bucket.len() > SERIAL {
        bucket.par_iter().map(|&p| (key_64(text, p), p)).collect_into_vec(keyed);
        keyed.par_sort_unstable_by_key(|&(key, _)| key);
        keyed.par_chunk_by_mut(|x, y| x.0 == y.0).for_each(|tied| cover.sort_tied(tied, &position));
        bucket.par_iter_mut().zip(keyed.par_iter()).for_each(|(slot, &(_, p))| *slot = slot_of(text, p));
    } else {
        keyed.extend(bucket.iter().map(|&p| (key_64(text, p), p)));
        keyed.sort_unstable_by_key(|&(key, _)| key);
        keyed.chunk_by_mut(|x, y| x.0 == y.0).for_each(|tied| cover.sort_tied(tied, &position));
        for (slot, &(_, p)) in bucket.iter_mut().zip(keyed.iter()) {
            *slot = slot_of(text, p);
        }
    }
}

/// A sorted slot's position bits; the top 2 bits carry the BWT character (`text[pos-1]`, 0 for
/// position 0, whose row is `$`'s), read while the suffix's words are still in cache so that
/// rows are written without a scattered read each ([`slot_of`]).
const POSITION_BITS: u64 = (1 << 62) - 1;

#[inline]
fn put_base(bwt: &mut [u32], x: u64, c: u8) {
    bwt[(x >> 4) as usize] |= (c as u32) << ((15 - (x & 15)) * 2);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_sort::{RadixModel, RADIX_TILE};
    use crate::text::compare_suffixes;
    use crate::text::tests::text_of;

    fn naive_rows(t: &PackedText) -> Vec<u64> {
        let seq: Vec<u8> = (0..t.len()).map(|i| t.base(i)).collect();
        let mut rows: Vec<u64> = (0..=t.len()).collect();
        rows.sort_by(|&a, &b| seq[a as usize..].cmp(&seq[b as usize..]));
        rows
    }

    /// `build_with_cover` under each (budget, threads, cover root) gives the BWT, primary and
    /// samples of `rows` (all suffixes in order, `$` = position n first).
    fn check_build(t: &PackedText, rows: &[u64], settings: &[(u64, usize, u64)]) {
        for &(budget, threads, cover_root) in settings {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let out = pool.install(|| build_with_cover(t, budget, cover_root, |_| {}));
            check_output(t, rows, &out, budget);
            // The GPU's pipeline (its CPU model), with tiles of 17, 3 and 4096 elements; with a
            // capacity that sends the larger chunks to the CPU; and failing from the second chunk.
            for (tile, capacity, fail_from) in [(17, u64::MAX, None), (3, 40, None), (RADIX_TILE, u64::MAX, Some(1))] {
                let mut model = RadixModel::new(tile);
                (model.capacity, model.fail_from) = (capacity, fail_from);
                let mut fallbacks = Vec::new();
                let mut chunks = Vec::new();
                let out = pool.install(|| {
                    build_with_sorter_cover(t, 2 * budget, cover_root, Box::new(model), &mut |e| match e {
                        SortEvent::Fallback { chunk, .. } => fallbacks.push(*chunk),
                        SortEvent::Chunk(c) => chunks.push((c.index, c.on)),
                        SortEvent::Done(_) => {}
                    })
                });
                check_output(t, rows, &out, budget);
                assert!(chunks.iter().enumerate().all(|(i, c)| c.0 == i), "chunks in order");
                if fail_from.is_some() && chunks.len() > 1 {
                    assert_eq!(fallbacks, vec![Some(1)]);
                    assert!(chunks[1..].iter().all(|c| c.1 == SortedOn::Cpu));
                } else {
                    assert!(fallbacks.is_empty());
                }
            }
        }
    }

    fn check_output(t: &PackedText, rows: &[u64], out: &BwtAndSamples, budget: u64) {
        {
            let primary = rows.iter().position(|&p| p == 0).unwrap() as u64;
            assert_eq!(out.primary, primary, "n {}", t.len());
            for (r, &p) in rows.iter().enumerate().skip(1) {
                if (r as u64).is_multiple_of(SA_INTERVAL) {
                    assert_eq!(out.samples[r / SA_INTERVAL as usize - 1], p);
                }
            }
            let bwt_chars: Vec<u8> = rows
                .iter()
                .filter(|&&p| p != 0)
                .map(|&p| if p == t.len() { t.base(t.len() - 1) } else { t.base(p - 1) })
                .collect();
            for (x, &c) in bwt_chars.iter().enumerate() {
                assert_eq!(
                    (out.bwt[x >> 4] >> ((15 - (x & 15)) * 2) & 3) as u8,
                    c,
                    "n {} budget {budget} x {x}",
                    t.len()
                );
            }
        }
    }

    #[test]
    fn matches_naive_suffix_sort_with_tiny_chunks() {
        let mut state = 7u64;
        for len in [1usize, 2, 3, 17, 40, 100, 333] {
            let seq: Vec<u8> = (0..len)
                .map(|i| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    // Low-entropy text (mostly A) makes long common prefixes and runs past the end.
                    if i % 7 == 0 {
                        (state >> 62) as u8
                    } else {
                        0
                    }
                })
                .collect();
            let t = text_of(&seq);
            check_build(&t, &naive_rows(&t), &[(8, 1, 2), (64, 3, 3), (64, 7, DEFAULT_COVER_ROOT), (1 << 20, 5, 4)]);
        }
    }

    /// A poly-A run of 70,000 (one bucket sorted in parallel), an exact tandem repeat and an
    /// exact duplication, against the plain comparison sort.
    #[test]
    fn long_repeats_and_a_huge_bucket_match_the_plain_sort() {
        let mut state = 11u64;
        let mut random = |len: usize| -> Vec<u8> {
            (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (state >> 62) as u8
                })
                .collect()
        };
        let unit = random(7);
        let dup = random(5000);
        let mut seq = vec![0u8; 70_000];
        seq.extend(random(300));
        seq.extend(unit.iter().cycle().take(20_000));
        seq.extend(&dup);
        seq.extend(random(100));
        seq.extend(&dup);
        let t = text_of(&seq);
        let mut rows: Vec<u64> = (0..t.len()).collect();
        rows.sort_unstable_by(|&a, &b| compare_suffixes(&t, a, b));
        rows.insert(0, t.len());
        check_build(&t, &rows, &[(1 << 30, 2, DEFAULT_COVER_ROOT), (1 << 16, 3, 4)]);
    }
}
