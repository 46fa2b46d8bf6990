//! The passes of the GPU's inexact search (`inexact_search` in cuda/inexact_match.cu): how
//! many threads each pass runs and how large their bounded stacks are, and the per-thread
//! scratch that holds them.
//!
//! Why passes: the stack a read needs varies by orders of magnitude. Most reads finish with a
//! couple of thousand entries, reads from repeat families need tens of thousands, and a few
//! (satellite arrays) hundreds of thousands. Giving every thread the largest stack would need
//! terabytes, so the first pass runs many threads with small stacks, and each later pass
//! searches the reads the previous one could not hold with fewer threads and larger stacks. The
//! last pass's stacks are as large as bwa's `-m` limit allows the search to grow (when memory
//! permits), so no read is left to the CPU. Threads take reads from a queue, so each pass's
//! time follows its work rather than its longest read.

use std::sync::Arc;

use anyhow::{bail, Result};
use cudarc::driver::{CudaSlice, CudaStream};

/// Bytes of one stack entry (`Entry` in cuda/inexact_match.cu).
pub const ENTRY_BYTES: usize = 32;
/// Bytes of one D-array cell (`Width`).
const WIDTH_BYTES: usize = 16;

/// Threads per SM and stack entries per thread of the first two passes; the third gets what
/// bwa's `-m` needs. Chosen from the CPU profile (`bcuda stack-profile`) of a human-like
/// genome: 2048 entries hold all but about 1% of reads, 32768 all but about 0.02%.
const PASS_THREADS_PER_SM: [usize; 3] = [1024, 64, 4];
const PASS_ENTRIES: [usize; 2] = [2048, 32768];
/// Entries a stack may need beyond bwa's `-m`: the search stops once it holds more than `-m`,
/// and one pop pushes at most 9.
const ENTRIES_BEYOND_MAX: usize = 16;

/// One pass: its threads (a multiple of the block width) and stack entries per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub threads: usize,
    pub entries: usize,
}

/// Scratch bytes of one thread for reads up to `max_len` and `n_buckets` scores.
pub fn bytes_per_thread(entries: usize, max_len: usize, n_buckets: usize) -> usize {
    entries * ENTRY_BYTES + 2 * (max_len + 1) * WIDTH_BYTES + max_len + 4 * n_buckets
}

/// The passes for a GPU with `sms` SMs and `budget` bytes of scratch, for reads up to
/// `max_len`, `n_buckets` scores and bwa's `-m` of `max_entries`. `entries` overrides the
/// stack sizes (the device checks force small stacks this way). Each pass gets at most a
/// third of the budget; a pass whose stacks would be no larger than the previous one's is left out.
pub fn plan(sms: usize, budget: usize, max_len: usize, n_buckets: usize, max_entries: usize, block_w: usize, entries: Option<&[usize]>) -> Result<Vec<Pass>> {
    let last = max_entries + ENTRIES_BEYOND_MAX;
    let wanted: Vec<usize> = match entries {
        Some(e) => e.to_vec(),
        None => vec![PASS_ENTRIES[0].min(last), PASS_ENTRIES[1].min(last), last],
    };
    let share = budget / 3;
    let mut passes: Vec<Pass> = Vec::new();
    for (p, &want) in wanted.iter().enumerate().take(3) {
        let most_threads = sms.max(1) * PASS_THREADS_PER_SM[p];
        let fixed = bytes_per_thread(0, max_len, n_buckets);
        // The last pass keeps its stack size and gives up threads when memory is short (down to
        // one); the others keep their threads and give up entries.
        let (threads, entries) = if p == 2 && entries.is_none() {
            match share / bytes_per_thread(want, max_len, n_buckets) {
                0 => (1, share.saturating_sub(fixed) / ENTRY_BYTES),
                fit => (fit.min(most_threads), want),
            }
        } else {
            (most_threads, want.min((share / most_threads).saturating_sub(fixed) / ENTRY_BYTES))
        };
        // Whole blocks, or one block of fewer threads.
        let threads = if threads >= block_w { threads / block_w * block_w } else { threads };
        if passes.last().is_some_and(|prev| entries <= prev.entries) || threads == 0 || entries == 0 {
            continue;
        }
        passes.push(Pass { threads, entries });
    }
    if passes.is_empty() {
        bail!("no GPU memory for the inexact search's stacks ({budget} bytes free for them)");
    }
    Ok(passes)
}

/// Per-thread working memory of one pass, kept across batches. Left uninitialised: the kernel
/// writes every cell before reading it. One set serves both streams: a batch's pass waits for
/// the previous batch's same pass to finish with it.
pub struct Scratchpad {
    pub pass: Pass,
    /// (max_len, buckets) it was sized for.
    pub size: (usize, usize),
    pub width: CudaSlice<u8>,
    pub seed_width: CudaSlice<u8>,
    pub seq: CudaSlice<u8>,
    pub entries: CudaSlice<u8>,
    pub heads: CudaSlice<i32>,
}

impl Scratchpad {
    pub fn fits(&self, max_len: usize, buckets: usize) -> bool {
        max_len <= self.size.0 && buckets <= self.size.1
    }

    pub fn new(stream: &Arc<CudaStream>, pass: Pass, m: usize, b: usize) -> Result<Scratchpad> {
        let t = pass.threads;
        // SAFETY: inexact_search initialises every element before reading it.
        unsafe {
            Ok(Scratchpad {
                pass,
                size: (m, b),
                width: stream.alloc::<u8>(t * (m + 1) * WIDTH_BYTES)?,
                seed_width: stream.alloc::<u8>(t * (m + 1) * WIDTH_BYTES)?,
                seq: stream.alloc::<u8>(t * m)?,
                entries: stream.alloc::<u8>(t * pass.entries * ENTRY_BYTES)?,
                heads: stream.alloc::<i32>(t * b)?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: usize = 1 << 30;

    /// On an H100-sized budget: three passes, the last with stacks as large as bwa's -m needs.
    #[test]
    fn a_large_gpu_gets_three_passes_and_a_stack_for_bwas_limit() {
        let p = plan(132, 30 * GB, 100, 68, 2_000_000, 64, None).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0], Pass { threads: 132 * 1024, entries: 2048 });
        assert_eq!(p[1], Pass { threads: 132 * 64, entries: 32768 });
        assert_eq!(p[2].entries, 2_000_016);
        assert!(p[2].threads >= 64 && p[2].threads % 64 == 0, "{p:?}");
        let total: usize = p.iter().map(|x| x.threads * bytes_per_thread(x.entries, 100, 68)).sum();
        assert!(total <= 30 * GB, "{total}");
    }

    /// A small budget shrinks the first passes' stacks and the last pass's threads.
    #[test]
    fn a_small_gpu_gets_smaller_passes() {
        let p = plan(20, 3 * GB, 100, 68, 2_000_000, 64, None).unwrap();
        assert!(p[0].entries < 2048 && p[0].threads == 20 * 1024, "{p:?}");
        let last = p.last().unwrap();
        assert_eq!(last.entries, 2_000_016);
        assert!(last.threads >= 1 && last.threads * bytes_per_thread(last.entries, 100, 68) <= GB, "{last:?}");
    }

    /// A small -m needs no large stacks: passes that would not be larger are left out.
    #[test]
    fn a_small_max_entries_needs_one_pass() {
        let p = plan(132, 30 * GB, 100, 68, 1000, 64, None).unwrap();
        assert_eq!(p, [Pass { threads: 132 * 1024, entries: 1016 }]);
    }

    #[test]
    fn forced_stack_sizes_are_kept() {
        let p = plan(132, 30 * GB, 100, 68, 2_000_000, 64, Some(&[64, 4096])).unwrap();
        assert_eq!(p, [Pass { threads: 132 * 1024, entries: 64 }, Pass { threads: 132 * 64, entries: 4096 }]);
    }

    #[test]
    fn no_memory_is_an_error() {
        assert!(plan(132, 1000, 100, 68, 2_000_000, 64, None).is_err());
    }
}
