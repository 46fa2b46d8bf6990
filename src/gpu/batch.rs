//! The host side of a GPU batch: what the kernels read (prepared before the GPU is involved,
//! on the reader thread) and what their answers become (hits per read; `None` for every read
//! the GPU could not hold, which the pipeline aligns on the CPU). Neither needs a GPU, so both
//! are tested in CI.

use super::GPU_MAX_LEN;
use crate::aln_options::{aln_score, batch_options, cal_maxdiff, AVG_ERR};
use crate::reads::ReadBatch;
use crate::sai::{AlnHit, GapOptions};

/// Kernel inputs of one batch, in the flat layouts the kernels read.
#[derive(Debug, Default)]
pub struct HostBatch {
    /// Reads in the batch.
    pub n: usize,
    /// The batch's options (gap opens capped by the longest read, as bwa does per batch).
    pub opt: GapOptions,
    /// exact_match: 4-bit codes of every read (see [`pack_reads`]), each read's first word,
    /// each read's length, and the length shared by all reads (if they share one).
    pub exact_words: Vec<u32>,
    pub exact_starts: Vec<u64>,
    pub lens: Vec<u16>,
    pub fixed_len: Option<u32>,
    /// Whether `exact_words` is laid out for the `sequence_stride` switch (GPUs of different
    /// models may be tuned differently: see [`HostBatch::repack_for`]).
    pub stride: bool,
    /// inexact_match: the reads it aligns (index in the batch), their codes' count (the GPU
    /// unpacks them back to back from `exact_words`), each one's first code, length and maximum
    /// differences.
    pub gpu_reads: Vec<u32>,
    pub n_codes: usize,
    pub starts: Vec<u64>,
    pub gpu_lens: Vec<u16>,
    pub max_diffs: Vec<i32>,
    /// Longest read inexact_match aligns, and the score buckets of its stack.
    pub max_len: usize,
    pub n_buckets: i32,
}

impl HostBatch {
    pub fn new(reads: &ReadBatch, opt: &GapOptions, stride: bool) -> HostBatch {
        let n = reads.len();
        let longest = reads.aligned_lens().max().unwrap_or(0);
        let batch_opt = batch_options(opt, longest);
        let lens: Vec<u16> = reads.aligned_lens().map(|len| len as u16).collect();
        let fixed_len = lens.first().copied().filter(|&l| lens.iter().all(|&x| x == l)).map(u32::from);
        let (exact_words, exact_starts) = pack_reads(reads, stride);
        // cal_maxdiff depends on the length alone: one value per length seen.
        let mut max_diff_of_len = vec![None; GPU_MAX_LEN + 1];
        let mut b =
            HostBatch { n, opt: batch_opt, exact_words, exact_starts, lens, fixed_len, stride, ..Default::default() };
        let mut code_count = 0;
        for (i, len) in reads.aligned_lens().enumerate() {
            if len == 0 || len > GPU_MAX_LEN {
                continue;
            }
            b.gpu_reads.push(i as u32);
            b.starts.push(code_count as u64);
            code_count += len;
            b.gpu_lens.push(len as u16);
            let max_diff = if opt.fnr > 0.0 {
                *max_diff_of_len[len].get_or_insert_with(|| cal_maxdiff(len as i32, AVG_ERR, opt.fnr as f64))
            } else {
                batch_opt.max_diff
            };
            b.max_diffs.push(max_diff);
            b.max_len = b.max_len.max(len);
        }
        b.n_codes = code_count;
        b.n_buckets =
            aln_score(batch_opt.max_diff + 1, batch_opt.max_gapo + 1, batch_opt.max_gape + 1, &batch_opt).max(1);
        b
    }

    /// Lays exact_match's input out again for another `sequence_stride` (a no-op when it is
    /// the same); `reads` are the batch's.
    pub fn repack_for(&mut self, reads: &ReadBatch, stride: bool) {
        if stride != self.stride {
            (self.exact_words, self.exact_starts) = pack_reads(reads, stride);
            self.stride = stride;
        }
    }
}

/// What the GPU answered for a batch: per inexact read, its hit count (negative: the read
/// outgrew its scratch) and its hits.
pub struct GpuAnswers<'a> {
    pub n_hits: &'a [i32],
    /// The hits of the reads with at most `hits_per_read`, packed read after read (3 words a
    /// hit, a .sai record), and where each read's first is there (counted in hits).
    pub hits: &'a [u64],
    pub firsts: &'a [u32],
    pub hits_per_read: usize,
    /// Reads with more than `hits_per_read` hits: their hits, from `long_offsets[j]` on.
    pub long_hits: &'a [u64],
    pub long_offsets: &'a [u32],
}

/// The kernels' answers for a read they give up on (cuda/inexact_match.cu: HITS_FULL,
/// ENTRIES_LIMIT; STACK_FULL after the last pass is counted by the kernels).
const HITS_FULL: i32 = -2;
const ENTRIES_LIMIT: i32 = -3;

impl GpuAnswers<'_> {
    /// Hits per read of the batch; `None` for reads the GPU did not align. On several threads:
    /// one thread turning a batch's 262,144 reads into records took 40 ms of the thread that
    /// feeds the GPU (measured when each read's hits lay in a slot of 16).
    pub fn to_hits(&self, batch: &HostBatch) -> Vec<Option<Vec<AlnHit>>> {
        use rayon::prelude::*;
        let on_gpu: Vec<Option<Vec<AlnHit>>> = (0..batch.gpu_reads.len())
            .into_par_iter()
            .with_min_len(READS_PER_TASK)
            .map(|j| self.read_hits(j))
            .collect();
        // The reads the GPU took are in batch order: all of them are the batch.
        if on_gpu.len() == batch.n {
            return on_gpu;
        }
        let mut out = vec![None; batch.n];
        for (hits, &i) in on_gpu.into_iter().zip(&batch.gpu_reads) {
            out[i as usize] = hits;
        }
        out
    }

    /// The hits of the GPU's read `j`; `None` where the GPU gave it up.
    fn read_hits(&self, j: usize) -> Option<Vec<AlnHit>> {
        let count = usize::try_from(self.n_hits[j]).ok()?;
        let slots = if count <= self.hits_per_read {
            &self.hits[self.firsts[j] as usize * 3..][..count * 3]
        } else {
            &self.long_hits[self.long_offsets[j] as usize * 3..][..count * 3]
        };
        Some(slots.chunks_exact(3).map(hit_from_words).collect())
    }

    /// Reads given up for their hit list, and for bwa's `-m` inside a group of chains.
    pub fn given_up(&self) -> (usize, usize) {
        let count = |code| self.n_hits.iter().filter(|&&n| n == code).count();
        (count(HITS_FULL), count(ENTRIES_LIMIT))
    }
}

fn hit_from_words(words: &[u64]) -> AlnHit {
    let mut bytes = [0u8; AlnHit::BYTES];
    for (chunk, w) in bytes.chunks_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    AlnHit::from_bytes(&bytes)
}

/// 4-bit read codes, 8 per u32 (first base in the low bits), in groups of 32 reads with words
/// interleaved (`stride`) or read after read; returns the words and each read's first index.
/// Groups are laid out on several threads.
pub fn pack_reads(reads: &ReadBatch, stride: bool) -> (Vec<u32>, Vec<u64>) {
    use rayon::prelude::*;
    let words: Vec<usize> = reads.aligned_lens().map(|len| len.div_ceil(8)).collect();
    // Each group's words: 32 times its longest read's (interleaved), or its reads' together.
    let group_words: Vec<usize> = words
        .chunks(32)
        .map(|g| if stride { 32 * g.iter().copied().max().unwrap_or(0) } else { g.iter().sum() })
        .collect();
    let mut packed = vec![0u32; group_words.iter().sum()];
    let mut starts = vec![0u64; reads.len()];
    let firsts: Vec<usize> = group_words.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
    let groups_per_task = READS_PER_TASK / 32;
    let task_words = group_words.chunks(groups_per_task).map(|w| w.iter().sum());
    split_by(&mut packed, task_words)
        .into_par_iter()
        .zip(starts.par_chunks_mut(READS_PER_TASK))
        .zip(firsts.par_chunks(groups_per_task))
        .enumerate()
        .for_each(|(task, ((words, starts), firsts))| {
            let offset = firsts[0];
            for (g, (starts, &first)) in starts.chunks_mut(32).zip(firsts).enumerate() {
                let group = task * READS_PER_TASK + g * 32;
                pack_group(reads, group, stride, first, &mut words[first - offset..], starts);
            }
        });
    (packed, starts)
}

/// One group of reads, from read `group` on (as many as `starts` has room for), into `words`
/// (its words and beyond), which start at index `first` of the whole layout.
fn pack_group(reads: &ReadBatch, group: usize, stride: bool, first: usize, words: &mut [u32], starts: &mut [u64]) {
    let mut at = 0;
    for (m, start_of_read) in starts.iter_mut().enumerate() {
        let codes = reads.aligned(group + m);
        let start = if stride { 0 } else { at };
        *start_of_read = (first + start) as u64;
        at += codes.len().div_ceil(8);
        for (w, eight) in codes.chunks(8).enumerate() {
            let word = eight.iter().rev().fold(0u32, |word, &c| (word << 4) | c as u32);
            words[if stride { w * 32 + m } else { start + w }] = word;
        }
    }
}

/// Reads per piece of work when a batch is laid out on several threads.
const READS_PER_TASK: usize = 4096;

/// `slice` cut in consecutive pieces of the given sizes.
fn split_by<T>(mut slice: &mut [T], sizes: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    sizes
        .map(|n| {
            let (piece, rest) = std::mem::take(&mut slice).split_at_mut(n);
            slice = rest;
            piece
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::ReadOptions;

    /// A read as its base codes (0..=4) and its aligned length.
    type Read = (Vec<u8>, usize);

    fn read(codes: Vec<u8>) -> Read {
        let len = codes.len();
        (codes, len)
    }

    /// The reads in a batch, as the parser fills it for aln.
    fn batch_of(reads: &[Read]) -> ReadBatch {
        let mut batch = ReadBatch::default();
        for (codes, len) in reads {
            let bases: Vec<u8> = codes.iter().map(|&c| b"ACGTN"[c as usize]).collect();
            batch.push(b"r", &bases, &[], *len, ReadOptions { sequence_only: true, ..Default::default() });
        }
        batch
    }

    fn aligned((codes, len): &Read) -> &[u8] {
        &codes[..*len]
    }

    /// The layout read after read, on one thread: what [`pack_reads`] must give.
    fn pack_one_by_one(reads: &[Read], stride: bool) -> (Vec<u32>, Vec<u64>) {
        let words_of = |r: &Read| r.1.div_ceil(8);
        let (mut packed, mut starts) = (Vec::new(), Vec::new());
        for group in reads.chunks(32) {
            let wpr = group.iter().map(words_of).max().unwrap_or(0);
            let base = packed.len();
            if stride {
                packed.resize(base + 32 * wpr, 0);
            }
            for (m, r) in group.iter().enumerate() {
                let start = if stride { base } else { packed.len() };
                starts.push(start as u64);
                if !stride {
                    packed.resize(packed.len() + words_of(r), 0);
                }
                for (w, eight) in aligned(r).chunks(8).enumerate() {
                    let word = eight.iter().rev().fold(0u32, |word, &c| (word << 4) | c as u32);
                    packed[if stride { start + w * 32 + m } else { start + w }] = word;
                }
            }
        }
        (packed, starts)
    }

    #[test]
    fn packing_on_several_threads_gives_the_layout_read_after_read() {
        for n in [0, 1, 31, 33, 4096, 4097, 10_000] {
            let reads: Vec<Read> =
                (0..n).map(|i| ((0..120).map(|j| ((i + j) % 5) as u8).collect(), (i * 7) % 120)).collect();
            let batch = batch_of(&reads);
            for stride in [false, true] {
                assert!(pack_reads(&batch, stride) == pack_one_by_one(&reads, stride), "{n} reads, stride {stride}");
            }
            let b = HostBatch::new(&batch, &GapOptions::default(), true);
            assert_eq!(b.n_codes, reads.iter().map(|r| aligned(r).len()).sum::<usize>(), "{n} reads");
        }
    }

    #[test]
    fn packing_places_bases_in_nibbles() {
        let reads = batch_of(&[read(vec![0, 1, 2, 3, 4, 0, 1, 2, 3]), read(vec![3; 9])]);
        let (p, s) = pack_reads(&reads, false);
        assert_eq!(s, vec![0, 2]);
        assert_eq!(p[0], 0x2104_3210);
        assert_eq!(p[1], 3);
        let (p, s) = pack_reads(&reads, true);
        assert_eq!(s, vec![0, 0]);
        assert_eq!(p[0], 0x2104_3210);
        assert_eq!(p[1], 0x3333_3333);
        assert_eq!(p[32], 3);
    }

    #[test]
    fn inexact_inputs_skip_empty_and_overlong_reads() {
        let reads = vec![read(vec![0; 40]), read(vec![]), read(vec![1; GPU_MAX_LEN + 1]), read(vec![2; 36])];
        let b = HostBatch::new(&batch_of(&reads), &GapOptions::default(), true);
        assert_eq!(b.n, 4);
        assert_eq!(b.gpu_reads, vec![0, 3]);
        assert_eq!(b.starts, vec![0, 40]);
        assert_eq!(b.gpu_lens, vec![40, 36]);
        assert_eq!(b.n_codes, 76);
        assert_eq!(b.max_len, 40);
        assert_eq!(b.fixed_len, None);
        // -n 0.04: bwa's per-read maximum differences.
        assert_eq!(b.max_diffs, vec![cal_maxdiff(40, AVG_ERR, 0.04), cal_maxdiff(36, AVG_ERR, 0.04)]);
        // Gap opens are capped by the longest read of the whole batch, the CPU-only one too.
        assert_eq!(b.opt, batch_options(&GapOptions::default(), GPU_MAX_LEN + 1));
        let same = HostBatch::new(&batch_of(&reads[..1]), &GapOptions::default(), false);
        assert_eq!(same.fixed_len, Some(40));
    }

    /// A GPU tuned for the other sequence_stride gets the layout a fresh packing would give.
    #[test]
    fn repacking_for_the_other_stride() {
        let reads: Vec<Read> = (0..70).map(|i| read((0..36 + i % 7).map(|j| ((i + j) % 4) as u8).collect())).collect();
        let reads = batch_of(&reads);
        let mut b = HostBatch::new(&reads, &GapOptions::default(), true);
        b.repack_for(&reads, false);
        let fresh = HostBatch::new(&reads, &GapOptions::default(), false);
        assert_eq!((&b.exact_words, &b.exact_starts, b.stride), (&fresh.exact_words, &fresh.exact_starts, false));
        assert_ne!(b.exact_words, HostBatch::new(&reads, &GapOptions::default(), true).exact_words);
    }

    #[test]
    fn answers_become_hits_and_overflow_becomes_none() {
        let reads = batch_of(&[read(vec![0; 40]), read(vec![]), read(vec![2; 36])]);
        let b = HostBatch::new(&reads, &GapOptions::default(), false);
        let hit = AlnHit { n_mm: 1, n_gapo: 0, n_gape: 0, score: 3, n_ins: 0, n_del: 0, k: 7, l: 9 };
        let bytes = hit.to_bytes();
        let words: Vec<u64> = bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        let answers = GpuAnswers {
            n_hits: &[1, -1],
            hits: &words,
            firsts: &[0, 1],
            hits_per_read: 2,
            long_hits: &[],
            long_offsets: &[0, 0],
        };
        let out = answers.to_hits(&b);
        assert_eq!(out, vec![Some(vec![hit]), None, None]);
    }

    /// The summary's reasons: reads given up for their hit list and for bwa's -m are counted
    /// apart (the kernels' STACK_FULL after the last pass has its own counter).
    #[test]
    fn given_up_reads_are_counted_by_reason() {
        let n_hits = [3, HITS_FULL, ENTRIES_LIMIT, -1, HITS_FULL, 0];
        let firsts = [0, 3, 3, 3, 3, 3];
        let answers = GpuAnswers {
            n_hits: &n_hits,
            hits: &[],
            firsts: &firsts,
            hits_per_read: 16,
            long_hits: &[],
            long_offsets: &[],
        };
        assert_eq!(answers.given_up(), (2, 1));
    }
}
