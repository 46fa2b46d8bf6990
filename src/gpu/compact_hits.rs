//! The batch's hits packed on the GPU before the copy back (`cuda/compact_hits.cu`): the host
//! page-locks and copies the hits the reads have, not every read's hit slots.
//!
//! A slot of 16 hits a read is 100 MB a batch of 262,144 reads. Page-locking it was most of the
//! 124-176 ms each batch slot's first batch spent before its kernels were queued, while the
//! run's first batch ran alone (docs/gpu.md, the feeder).

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::nvrtc::compile_cached;

pub const COMPACT_HITS_CU: &str = include_str!("../../cuda/compact_hits.cu");

/// Reads a thread of compact_hits takes: one atomic a chunk.
pub const CHUNK_READS: usize = 32;

/// Hits a read that the host's page-locked copy holds. A batch with more is read in full all the
/// same: the rest is copied from the device when it is collected, a copy of a few milliseconds.
/// The copy does not grow to fit: page-locking mid-run waits for the GPU's queued work. bwa's
/// `.sai` of 20,000 reads of the human-like 100 Mbp genome has 1.09 hits a read within 16 at
/// 100 bp and 1.24 in ancient DNA, and 0.07 and 0.36 a read in the long list
/// (bench/results/cpu-2c/hits-per-read.txt).
pub const HOST_HITS_PER_READ: usize = 2;

/// The words the host's page-locked copies of a batch's packed and long hits hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRoom {
    /// No room at all (`BCUDA_TEST_NO_HOST_ROOM`): every batch is read at collect.
    none: bool,
}

impl HostRoom {
    /// A room that holds nothing.
    pub fn none() -> HostRoom {
        HostRoom { none: true }
    }

    /// The packed hits' words for a batch of `n` reads the GPU searches.
    pub fn packed_words(&self, n: usize) -> usize {
        if self.none {
            return 0;
        }
        n * HOST_HITS_PER_READ * 3
    }

    /// The long hits' words, of a list with room for `room` hits: half of it.
    pub fn long_words(&self, room: usize) -> usize {
        if self.none {
            return 0;
        }
        room / 2 * 3
    }
}

/// The chunks of a batch of `n` reads the GPU searches.
pub fn chunks(n: usize) -> usize {
    n.div_ceil(CHUNK_READS)
}

/// The words of compact_hits' `chunk_at` for `n` reads: the count of packed hits, then each
/// chunk's first.
pub fn chunk_words(n: usize) -> usize {
    1 + chunks(n)
}

/// The hits of a read with `count` (the kernels' answer) in the packed list, as kept_hits: none
/// for a read given up (negative) or one whose hits are in the long list (over
/// `hits_per_read`).
pub fn kept(count: i32, hits_per_read: usize) -> usize {
    usize::try_from(count).ok().filter(|&c| c <= hits_per_read).unwrap_or(0)
}

/// Where each read's hits start in the packed list (counted in hits), from the start of its
/// chunk (`chunk_firsts`: compact_hits' `chunk_at` after the count) and the counts of the
/// reads before it in the chunk.
pub fn read_firsts(n_hits: &[i32], hits_per_read: usize, chunk_firsts: &[u32]) -> Vec<u32> {
    let mut firsts = Vec::with_capacity(n_hits.len());
    for (chunk, &start) in n_hits.chunks(CHUNK_READS).zip(chunk_firsts) {
        let mut at = start;
        for &count in chunk {
            firsts.push(at);
            at += kept(count, hits_per_read) as u32;
        }
    }
    firsts
}

/// compact_hits, compiled (or from the kernel cache) and loaded into `ctx`.
pub fn load(ctx: &Arc<CudaContext>, arch: &'static str) -> Result<CudaFunction> {
    let module = compile_cached(COMPACT_HITS_CU, &[], arch)?.load(ctx)?;
    Ok(module.load_function("compact_hits")?)
}

/// What compact_hits reads: the `n` reads' hit counts and hit slots.
pub struct HitSlots<'a> {
    pub n_hits: &'a CudaSlice<i32>,
    pub hits: &'a CudaSlice<u64>,
    pub hits_per_read: usize,
    pub n: usize,
}

/// Queues compact_hits on `stream`: the count and the chunks' starts into `chunk_at`
/// ([`chunk_words`] long), the hits into `packed`.
pub fn launch(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    slots: &HitSlots,
    chunk_at: &mut CudaSlice<u32>,
    packed: &mut CudaSlice<u64>,
) -> Result<()> {
    stream.memset_zeros(&mut chunk_at.slice_mut(..1))?;
    if slots.n == 0 {
        return Ok(());
    }
    let threads = chunks(slots.n) as u32;
    let cfg = LaunchConfig { grid_dim: (threads.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let (per_read, n, chunk_reads) = (slots.hits_per_read as i32, slots.n as u32, CHUNK_READS as u32);
    let mut launch = stream.launch_builder(f);
    launch.arg(slots.n_hits).arg(slots.hits).arg(&per_read).arg(&n).arg(&chunk_reads).arg(chunk_at).arg(packed);
    // SAFETY: argument order and types match compact_hits' signature; `chunk_at` holds
    // chunk_words(n) words and `packed` n x hits_per_read hits, the most the kernel writes.
    unsafe { launch.launch(cfg) }.context("launching compact_hits")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_room_holds_two_hits_a_read_and_half_the_long_list() {
        let room = HostRoom::default();
        assert_eq!((room.packed_words(1000), room.long_words(4000)), (6000, 6000));
        assert_eq!(room.packed_words(262_144), 262_144 * 6);
        let none = HostRoom::none();
        assert_eq!((none.packed_words(1000), none.long_words(4000)), (0, 0));
    }

    #[test]
    fn only_the_hits_of_answered_reads_within_their_slots_are_kept() {
        assert_eq!([3, 0, 16, 17, -1, -2, -3].map(|c| kept(c, 16)), [3, 0, 16, 0, 0, 0, 0]);
        assert_eq!(kept(5, 4), 0);
    }

    /// Chunks land in any order: each read's first hit follows its chunk's start.
    #[test]
    fn reads_start_after_the_hits_before_them_in_their_chunk() {
        let mut n_hits = vec![1i32; CHUNK_READS + 3];
        n_hits[0] = 2;
        n_hits[1] = -2;
        n_hits[2] = 20;
        n_hits[CHUNK_READS + 1] = 0;
        let later = (CHUNK_READS - 3) as u32 + 2;
        let firsts = read_firsts(&n_hits, 16, &[3, 0]);
        assert_eq!(&firsts[..5], &[3, 5, 5, 5, 6]);
        assert_eq!(firsts[CHUNK_READS - 1], 3 + later - 1);
        assert_eq!(&firsts[CHUNK_READS..], &[0, 1, 1]);
        assert_eq!(chunk_words(CHUNK_READS + 3), 3);
        assert_eq!(chunk_words(0), 1);
    }
}
