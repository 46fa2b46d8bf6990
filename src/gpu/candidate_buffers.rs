//! The candidates' buffers for one batch in flight (cuda/candidates.cu's rung, trees and the
//! replay's entries), grown on demand and reused batch after batch: `aln`'s two uses of the
//! candidates (src/gpu/exact_replay.rs, src/gpu/proof_pass.rs) each keep a set per slot.

use std::sync::Arc;

use anyhow::Result;
use cudarc::driver::{CudaStream, DeviceRepr};

use super::buffers::{DeviceBuffer, Download};
use super::candidates::{ptr, BRANCH_BYTES, COUNTERS, FOUND_WORDS, TREE_NODE_BYTES};

/// The most rounds the counts hold room for (candidates.rs's MAX_ROUNDS).
pub(super) const MAX_ROUNDS: usize = 1024;
/// Lists of reads: a rung's, the next rung's, the proof's (candidate_rung_end's), and one spare.
pub(super) const LISTS: usize = 4;

/// Room per read of a batch: a rung that outgrows it leaves its reads to bwa's search (its
/// overflow counter is set), and a tree without room leaves its read.
#[derive(Clone, Copy)]
pub(super) struct Room {
    pub branches: usize,
    /// The fewest branches a round has room for, however few the reads.
    pub min_branches: usize,
    pub nodes: usize,
    pub found: usize,
    pub tree_nodes: usize,
}

/// The room reserved for a batch, in branches, nodes, alignments and tree nodes.
pub(super) type Sizes = [usize; 4];

pub(super) struct CandidateBuffers {
    pub seq: DeviceBuffer<u8>,
    pub bound_start: DeviceBuffer<u64>,
    pub bounds: DeviceBuffer<u8>,
    pub budget: DeviceBuffer<u16>,
    pub max_edits: DeviceBuffer<u8>,
    pub status: DeviceBuffer<u8>,
    pub best: DeviceBuffer<u32>,
    pub any: DeviceBuffer<u8>,
    pub extensions: DeviceBuffer<u32>,
    pub lists: DeviceBuffer<u32>,
    pub branches: [DeviceBuffer<u8>; 2],
    pub counts: DeviceBuffer<u32>,
    pub nodes: DeviceBuffer<u64>,
    pub found: DeviceBuffer<u32>,
    pub found_head: DeviceBuffer<u32>,
    pub found_next: DeviceBuffer<u32>,
    pub tree: DeviceBuffer<u8>,
    pub tree_used: DeviceBuffer<u32>,
    pub tree_start: DeviceBuffer<u32>,
    pub entries: DeviceBuffer<u8>,
    /// The rung's counters (nodes, alignments, overflow, lookups), the lists' counts, and the
    /// replay's lookups: read back for the summary.
    pub counters: Download<u32>,
    pub list_counts: Download<u32>,
    pub lookups: Download<u64>,
}

impl CandidateBuffers {
    pub(super) fn new() -> CandidateBuffers {
        CandidateBuffers {
            seq: DeviceBuffer::new(),
            bound_start: DeviceBuffer::new(),
            bounds: DeviceBuffer::new(),
            budget: DeviceBuffer::new(),
            max_edits: DeviceBuffer::new(),
            status: DeviceBuffer::new(),
            best: DeviceBuffer::new(),
            any: DeviceBuffer::new(),
            extensions: DeviceBuffer::new(),
            lists: DeviceBuffer::new(),
            branches: [DeviceBuffer::new(), DeviceBuffer::new()],
            counts: DeviceBuffer::new(),
            nodes: DeviceBuffer::new(),
            found: DeviceBuffer::new(),
            found_head: DeviceBuffer::new(),
            found_next: DeviceBuffer::new(),
            tree: DeviceBuffer::new(),
            tree_used: DeviceBuffer::new(),
            tree_start: DeviceBuffer::new(),
            entries: DeviceBuffer::new(),
            counters: Download::new(),
            list_counts: Download::new(),
            lookups: Download::new(),
        }
    }

    /// Reserves every buffer for a batch of `n` reads and `n_codes` bases with `room`, and
    /// zeroes the counters; the sizes reserved.
    pub(super) fn reserve(
        &mut self,
        s: &Arc<CudaStream>,
        (n, n_codes): (usize, usize),
        room: Room,
        entry_bytes: usize,
    ) -> Result<Sizes> {
        let n = n.max(1);
        let sizes = [(room.branches * n).max(room.min_branches), room.nodes * n, room.found * n, room.tree_nodes * n];
        self.seq.reserve(s, n_codes)?;
        self.bound_start.reserve(s, n)?;
        self.bounds.reserve(s, 2 * (n_codes + n))?;
        self.budget.reserve(s, n)?;
        self.max_edits.reserve(s, n)?;
        self.status.reserve(s, n)?;
        self.best.reserve(s, n)?;
        self.any.reserve(s, n)?;
        self.extensions.reserve(s, n)?;
        self.lists.reserve(s, LISTS * n)?;
        for branches in &mut self.branches {
            branches.reserve(s, sizes[0] * BRANCH_BYTES)?;
        }
        s.memset_zeros(self.counts.reserve(s, MAX_ROUNDS + 2)?.0)?;
        self.nodes.reserve(s, sizes[1])?;
        self.found.reserve(s, sizes[2] * FOUND_WORDS)?;
        self.found_head.reserve(s, n)?;
        self.found_next.reserve(s, sizes[2])?;
        self.tree.reserve(s, sizes[3] * TREE_NODE_BYTES)?;
        s.memset_zeros(self.tree_used.reserve(s, 1)?.0)?;
        self.tree_start.reserve(s, n)?;
        self.entries.reserve(s, sizes[3] * entry_bytes)?;
        s.memset_zeros(self.counters.reserve(s, COUNTERS)?)?;
        s.memset_zeros(self.list_counts.reserve(s, LISTS)?)?;
        s.memset_zeros(self.lookups.reserve(s, 1)?)?;
        Ok(sizes)
    }

    /// List `j`'s address for a batch of `n` reads, and its count's.
    pub(super) fn list(&mut self, s: &Arc<CudaStream>, j: usize, n: usize) -> Result<(u64, u64)> {
        let lists = at(&mut self.lists, s)?;
        let counts = ptr(self.list_counts.reserve(s, 0)?, s);
        Ok((lists + 4 * (j * n.max(1)) as u64, counts + 4 * j as u64))
    }

    /// The counters' address.
    pub(super) fn counters_at(&mut self, s: &Arc<CudaStream>) -> Result<u64> {
        Ok(ptr(self.counters.reserve(s, 0)?, s))
    }

    /// Queues the copies of the summary's counts.
    pub(super) fn fetch_counts(&mut self, s: &Arc<CudaStream>) -> Result<()> {
        self.counters.fetch(s, COUNTERS)?;
        self.list_counts.fetch(s, LISTS)?;
        self.lookups.fetch(s, 1)
    }
}

/// The device address of a buffer reserved before (the kernels take some as plain pointers).
pub(super) fn at<T: DeviceRepr>(b: &mut DeviceBuffer<T>, s: &Arc<CudaStream>) -> Result<u64> {
    Ok(ptr(b.reserve(s, 0)?.0, s))
}
