//! The candidates' buffers for one batch in flight (cuda/candidates.cu's rung, trees and the
//! replay's entries), grown on demand and reused batch after batch: `aln`'s two uses of the
//! candidates (src/gpu/exact_replay.rs, src/gpu/proof_pass.rs) each keep a set per slot.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};

use super::buffers::{DeviceBuffer, Download, PinTimes};
use super::candidates::{
    cfg, ptr, CandidateKernels, OutputsArg, Penalties, ReadsArg, BLOCK, BRANCH_BYTES, COUNTERS, FOUND_WORDS,
    MAX_ROUNDS, TREE_NODE_BYTES,
};

/// A rung's rounds run this many blocks of 256 threads an SM.
const ROUND_BLOCKS_PER_SM: usize = 16;
/// Extensions a read may take in a rung before it is left to bwa's search (the ladder's).
pub(super) const MOST_EXTENSIONS: u32 = 60_000;

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
    /// The page-locking of the host copies read back.
    pub(super) fn pinned(&self) -> PinTimes {
        [self.counters.pinned, self.list_counts.pinned, self.lookups.pinned].into_iter().sum()
    }

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

/// How a rung over list 0 runs: on this BWT (the occurrence sectors, or bwa's array), at these
/// penalties, for `rounds` rounds, at most `most_extensions` extensions a read, each read's
/// searches stopping at its first alignment or not, its paths kept (nodes, and the alignments
/// listed by read) or not, over a batch of `n` reads.
pub(super) struct RungLaunch<'a> {
    pub words: &'a CudaSlice<u32>,
    pub primary: u64,
    pub l2: &'a CudaSlice<u64>,
    pub p: Penalties,
    pub rounds: usize,
    pub most_extensions: u32,
    pub stop_at_any: bool,
    pub keep_paths: bool,
    pub sms: usize,
    pub n: usize,
}

impl CandidateBuffers {
    /// The batch's reads as the candidates' kernels take them: the search sequences, bounds,
    /// budgets and edit limits here, the starts and lengths the batch's.
    pub(super) fn reads_arg(
        &mut self,
        s: &Arc<CudaStream>,
        starts: &CudaSlice<u64>,
        lens: &CudaSlice<u16>,
    ) -> Result<ReadsArg> {
        Ok(ReadsArg {
            codes: at(&mut self.seq, s)?,
            code_start: ptr(starts, s),
            len: ptr(lens, s),
            bounds: at(&mut self.bounds, s)?,
            bound_start: at(&mut self.bound_start, s)?,
            budget: at(&mut self.budget, s)?,
            max_edits: at(&mut self.max_edits, s)?,
        })
    }

    /// Queues a rung over the reads of list 0 (`sizes` as reserved): its seed and its rounds.
    /// Returns its outputs and the address of the reads' extension counts, which the kernels
    /// after it read.
    pub(super) fn queue_rung(
        &mut self,
        k: &CandidateKernels,
        s: &Arc<CudaStream>,
        rs: &ReadsArg,
        r: &RungLaunch,
        sizes: Sizes,
    ) -> Result<(OutputsArg, u64)> {
        let paths = |address: u64| if r.keep_paths { address } else { 0 };
        let mut o = OutputsArg {
            next: at(&mut self.branches[0], s)?,
            next_capacity: sizes[0] as u32,
            _pad0: 0,
            nodes: paths(at(&mut self.nodes, s)?),
            node_capacity: if r.keep_paths { sizes[1] as u32 } else { 0 },
            _pad1: 0,
            found: at(&mut self.found, s)?,
            found_capacity: sizes[2] as u32,
            _pad2: 0,
            counters: self.counters_at(s)?,
            best: at(&mut self.best, s)?,
            any: at(&mut self.any, s)?,
            found_head: paths(at(&mut self.found_head, s)?),
            found_next: paths(at(&mut self.found_next, s)?),
        };
        let (list, listed) = self.list(s, 0, r.n)?;
        let (round_counts, extensions) = (at(&mut self.counts, s)?, at(&mut self.extensions, s)?);
        let mut launch = s.launch_builder(&k.seed);
        launch.arg(r.l2).arg(rs).arg(&r.p).arg(&list).arg(&listed).arg(&round_counts).arg(&o.next).arg(&o);
        launch.arg(&extensions);
        // SAFETY: argument order and types match candidate_seed's signature.
        unsafe { launch.launch(cfg(r.n)) }.context("launching candidate_seed")?;
        let branches = [o.next, at(&mut self.branches[1], s)?];
        let blocks = (ROUND_BLOCKS_PER_SM * r.sms) as u32;
        let grid = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        let (most, stop_at_any) = (r.most_extensions, r.stop_at_any as i32);
        for round in 0..r.rounds {
            o.next = branches[(round + 1) % 2];
            let r32 = round as u32;
            let mut launch = s.launch_builder(&k.round);
            launch.arg(r.words).arg(&r.primary).arg(r.l2).arg(rs).arg(&r.p).arg(&r32).arg(&branches[round % 2]);
            launch.arg(&round_counts).arg(&o).arg(&extensions).arg(&most).arg(&stop_at_any);
            // SAFETY: argument order and types match candidate_round's signature.
            unsafe { launch.launch(grid) }.context("launching candidate_round")?;
        }
        Ok((o, extensions))
    }
}

/// The device address of a buffer reserved before (the kernels take some as plain pointers).
pub(super) fn at<T: DeviceRepr>(b: &mut DeviceBuffer<T>, s: &Arc<CudaStream>) -> Result<u64> {
    Ok(ptr(b.reserve(s, 0)?.0, s))
}
