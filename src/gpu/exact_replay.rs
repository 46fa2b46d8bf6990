//! Reads that occur whole, answered by the candidates and the replay instead of bwa's search
//! (the switch `exact_replay`).
//!
//! bwa's search of a read that occurs whole finds its exact hit first, then proves the stratum
//! of one mismatch: each mismatch is a chain of matching children until its interval empties,
//! about 300 chains of a dozen pops a 100 bp read at 3.1 Gbp. Those reads (a third to two
//! fifths of a run) took 0.6 s of the passes' 1.06 s a million 100 bp reads on the H100
//! (docs/gpu-search.md). Here one rung of the candidates' ladder (cuda/candidates.cu) at a
//! budget of one mismatch finds every alignment within it, `candidate_tree` lays them out as
//! bwa's search walks them, and `inexact_replay` (cuda/inexact_match.cu) runs bwa's search kept
//! to that tree: bwa's hits in bwa's order, in about a read's length of pops. A read the rung
//! or the tree cannot hold, or with more hits than its slots, goes on to pass 1.
//!
//! Why bwa's `-m` cannot differ: with every gap costing more than a mismatch, bwa pops only
//! entries of score 0 and s_mm for such a read: the root's chain (len + 1) and, for each of
//! 3 x len mismatches, a chain of at most len + 1. A pop adds at most 8 entries to the stack,
//! so [`max_len_for`] keeps the reads whose stack cannot pass `-m`.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::candidate_buffers::{at, CandidateBuffers, Room, Sizes, MAX_ROUNDS};
use super::candidates::{cfg, lookups_in, ptr, CandidateKernels, OutputsArg, Penalties, ReadsArg, BLOCK, COUNTERS};
use super::BatchTimes;
use crate::sai::{GapOptions, MODE_NONSTOP};

/// Room per inexact read of a batch: a read's rung has two parts and branches little (one
/// mismatch), its tree a path of about a read's length an alignment.
const ROOM: Room = Room { branches: 4, min_branches: 1 << 16, nodes: 96, found: 4, tree_nodes: 128 };
/// A read with more alignments than this goes to the passes (more than 16 hits would anyway).
const MOST_ALIGNS: u32 = 32;
/// Extensions a read may take in the rung before it goes to the passes.
pub(super) const MOST_EXTENSIONS: u32 = 60_000;
/// The rung's rounds run this many blocks of 256 threads an SM.
pub(super) const ROUND_BLOCKS_PER_SM: usize = 16;

/// Whether these options let the replay answer the reads that occur whole: every difference
/// costs something, a gap more than a mismatch (so bwa pops no gapped entry), and bwa stops one
/// mismatch past its best hit (not `-N`).
pub fn applies(opt: &GapOptions) -> bool {
    opt.s_mm > 0 && opt.s_gapo > opt.s_mm && opt.mode & MODE_NONSTOP == 0
}

/// The longest read whose bwa stack cannot pass `max_entries` (bwa's `-m`) when it occurs whole
/// (see the module's note): 1 + 8 (len + 1)(3 len + 1) entries at most.
pub fn max_len_for(max_entries: i32) -> usize {
    let fits = |len: u64| 8 * (len + 1) * (3 * len + 1) < max_entries.max(0) as u64;
    (0..super::GPU_MAX_LEN as u64).take_while(|&len| fits(len + 1)).count()
}

/// A batch's inputs as the ladder reads them (exact_match's answers and the inexact reads).
pub(super) struct LadderInputs<'a> {
    pub words: &'a CudaSlice<u32>,
    pub primary: u64,
    pub l2: &'a CudaSlice<u64>,
    pub exact_k: &'a CudaSlice<u64>,
    pub exact_l: &'a CudaSlice<u64>,
    pub read_of: &'a CudaSlice<u32>,
    pub codes: &'a CudaSlice<u8>,
    pub starts: &'a CudaSlice<u64>,
    pub lens: &'a CudaSlice<u16>,
    pub n: usize,
    pub n_codes: usize,
    pub max_len: usize,
    pub opt: &'a GapOptions,
    pub sms: usize,
    pub entry_bytes: usize,
}

fn penalties(opt: &GapOptions) -> Penalties {
    Penalties { s_mm: opt.s_mm, s_gapo: opt.s_gapo, s_gape: opt.s_gape, max_gapo: opt.max_gapo.max(0) }
}

/// Lists the batch's reads that occur whole (and whose search `-m` cannot stop) for the rung,
/// with their search sequences, bounds and budget: before inexact_order, which leaves them out
/// of pass 1.
/// Returns the room reserved for the branches, nodes, alignments and tree nodes.
fn mark_exact_reads(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &LadderInputs,
) -> Result<Sizes> {
    let sizes = b.reserve(s, (x.n, x.n_codes), ROOM, x.entry_bytes)?;
    let (n32, max_len, s_mm) = (x.n as u32, max_len_for(x.opt.max_entries) as i32, x.opt.s_mm);
    let seq_bounds = [at(&mut b.seq, s)?, at(&mut b.bounds, s)?, at(&mut b.bound_start, s)?];
    let outs = [at(&mut b.budget, s)?, at(&mut b.max_edits, s)?, at(&mut b.status, s)?, at(&mut b.lists, s)?];
    let list_count = ptr(b.list_counts.reserve(s, 0)?, s);
    let mut launch = s.launch_builder(&k.exact_reads);
    launch.arg(x.exact_k).arg(x.exact_l).arg(x.read_of).arg(x.codes).arg(x.starts).arg(x.lens).arg(&n32);
    launch.arg(&max_len).arg(&s_mm).arg(&seq_bounds[0]).arg(&seq_bounds[1]).arg(&seq_bounds[2]);
    launch.arg(&outs[0]).arg(&outs[1]).arg(&outs[2]).arg(&outs[3]).arg(&list_count);
    // SAFETY: argument order and types match candidate_exact_reads' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_exact_reads")?;
    Ok(sizes)
}

/// The rung over the listed reads and their trees, queued on `s` (after read_widths, before
/// the replay): seed, the rounds, rung_end, candidate_tree.
fn queue_ladder(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &LadderInputs,
    sizes: Sizes,
) -> Result<()> {
    let p = penalties(x.opt);
    let rs = ReadsArg {
        codes: at(&mut b.seq, s)?,
        code_start: ptr(x.starts, s),
        len: ptr(x.lens, s),
        bounds: at(&mut b.bounds, s)?,
        bound_start: at(&mut b.bound_start, s)?,
        budget: at(&mut b.budget, s)?,
        max_edits: at(&mut b.max_edits, s)?,
    };
    let list_counts = ptr(b.list_counts.reserve(s, 0)?, s);
    let counters = ptr(b.counters.reserve(s, 0)?, s);
    let (status, lists) = (at(&mut b.status, s)?, at(&mut b.lists, s)?);
    let list = [0u64, 1, 2].map(|j| lists + 4 * j * x.n.max(1) as u64);
    let listed = [0u64, 1, 2].map(|j| list_counts + 4 * j);
    let mut o = OutputsArg {
        next: at(&mut b.branches[0], s)?,
        next_capacity: sizes[0] as u32,
        _pad0: 0,
        nodes: at(&mut b.nodes, s)?,
        node_capacity: sizes[1] as u32,
        _pad1: 0,
        found: at(&mut b.found, s)?,
        found_capacity: sizes[2] as u32,
        _pad2: 0,
        counters,
        best: at(&mut b.best, s)?,
        any: at(&mut b.any, s)?,
        found_head: at(&mut b.found_head, s)?,
        found_next: at(&mut b.found_next, s)?,
    };
    let (round_counts, extensions) = (at(&mut b.counts, s)?, at(&mut b.extensions, s)?);
    let mut launch = s.launch_builder(&k.seed);
    launch.arg(x.l2).arg(&rs).arg(&p).arg(&list[0]).arg(&list_counts).arg(&round_counts).arg(&o.next).arg(&o);
    launch.arg(&extensions);
    // SAFETY: argument order and types match candidate_seed's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_seed")?;
    let branches = [o.next, at(&mut b.branches[1], s)?];
    let grid = LaunchConfig {
        grid_dim: ((ROUND_BLOCKS_PER_SM * x.sms) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (most, stop_at_any) = (MOST_EXTENSIONS, 0i32);
    for round in 0..rounds(x) {
        o.next = branches[(round + 1) % 2];
        let r32 = round as u32;
        let mut launch = s.launch_builder(&k.round);
        launch.arg(x.words).arg(&x.primary).arg(x.l2).arg(&rs).arg(&p).arg(&r32).arg(&branches[round % 2]);
        launch.arg(&round_counts).arg(&o).arg(&extensions).arg(&most).arg(&stop_at_any);
        // SAFETY: argument order and types match candidate_round's signature.
        unsafe { launch.launch(grid) }.context("launching candidate_round")?;
    }
    let (most_score, s_mm) = (x.opt.s_mm, x.opt.s_mm);
    let mut launch = s.launch_builder(&k.rung_end);
    launch.arg(&list[0]).arg(&list_counts).arg(&o.best).arg(&extensions).arg(&most).arg(&s_mm).arg(&most_score);
    launch.arg(&rs.max_edits).arg(&rs.budget).arg(&status).arg(&list[1]).arg(&listed[1]);
    launch.arg(&list[2]).arg(&listed[2]);
    // SAFETY: argument order and types match candidate_rung_end's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_rung_end")?;
    let (tree, tree_capacity) = (at(&mut b.tree, s)?, sizes[3] as u32);
    let (tree_used, tree_start) = (at(&mut b.tree_used, s)?, at(&mut b.tree_start, s)?);
    let mut launch = s.launch_builder(&k.tree);
    launch.arg(&list[0]).arg(&list_counts).arg(&rs).arg(&p).arg(&o.nodes).arg(&o.found).arg(&o.found_head);
    launch.arg(&o.found_next).arg(&counters).arg(&MOST_ALIGNS).arg(&tree).arg(&tree_capacity).arg(&tree_used);
    launch.arg(&tree_start).arg(&status);
    // SAFETY: argument order and types match candidate_tree's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_tree")?;
    Ok(())
}

/// The rounds of the rung: a branch extends once a read base and once a deleted base, and one
/// mismatch's budget allows no deletion but where a gap costs as little.
fn rounds(x: &LadderInputs) -> usize {
    let cheapest = if x.opt.max_gapo > 0 { x.opt.s_mm.min(x.opt.s_gapo).min(x.opt.s_gape) } else { x.opt.s_mm };
    (x.max_len + (x.opt.s_mm / cheapest.max(1)) as usize + 2).min(MAX_ROUNDS)
}

/// Adds a fetched batch's replay to the totals: its events (around the rung and trees, around
/// the replay), given pass 1's reads (those not marked, and those the replay handed on) and the
/// batch's inexact reads. Returns its words for the kernel line.
pub(super) fn add_to(
    t: &mut BatchTimes,
    b: &CandidateBuffers,
    e: &[CudaEvent; 4],
    pass_one_reads: usize,
    n_gpu: usize,
) -> Result<String> {
    let (rung_ms, replay_ms) = (e[0].elapsed_ms(&e[1])?, e[2].elapsed_ms(&e[3])?);
    let marked = b.list_counts.read(3)?[0] as usize;
    let answered = marked.saturating_sub(pass_one_reads.saturating_sub(n_gpu.saturating_sub(marked)));
    t.replay_ms += rung_ms + replay_ms;
    t.replay_rung_ms += rung_ms;
    t.replay_reads += marked;
    t.replay_answered += answered;
    t.replay_rung_lookups += lookups_in(b.counters.read(COUNTERS)?);
    t.replay_lookups += b.lookups.read(1)?[0];
    Ok(format!(", rung {rung_ms:.0} ms + replay {replay_ms:.0} ms ({answered} of {marked} whole)"))
}

/// The address of the reads' marks (inexact_order leaves out the marked ones).
fn status_at(b: &mut CandidateBuffers, s: &Arc<CudaStream>) -> Result<u64> {
    at(&mut b.status, s)
}

/// inexact_replay's inputs from these buffers (device addresses).
pub(super) struct ReplayArgs {
    pub list: u64,
    pub listed: u64,
    pub status: u64,
    pub tree: u64,
    pub tree_start: u64,
    pub entries: u64,
    pub lookups: u64,
}

pub(super) fn replay_args(b: &mut CandidateBuffers, s: &Arc<CudaStream>) -> Result<ReplayArgs> {
    Ok(ReplayArgs {
        list: at(&mut b.lists, s)?,
        listed: ptr(b.list_counts.reserve(s, 0)?, s),
        status: at(&mut b.status, s)?,
        tree: at(&mut b.tree, s)?,
        tree_start: at(&mut b.tree_start, s)?,
        entries: at(&mut b.entries, s)?,
        lookups: ptr(b.lookups.reserve(s, 0)?, s),
    })
}

/// One batch's replay as the queue drives it: the reads listed (before inexact_order, which
/// reads their marks at `status`), the rung and trees (after read_widths), the replay (before
/// pass 1, [`GpuAligner`](super::GpuAligner)'s launch_replay), with events around the last two.
pub(super) struct BatchReplay<'k> {
    kernels: &'k CandidateKernels,
    sizes: Sizes,
    pub status: u64,
    pub events: Vec<CudaEvent>,
}

impl<'k> BatchReplay<'k> {
    pub fn mark(
        kernels: &'k CandidateKernels,
        b: &mut CandidateBuffers,
        s: &Arc<CudaStream>,
        x: &LadderInputs,
    ) -> Result<BatchReplay<'k>> {
        let sizes = mark_exact_reads(kernels, b, s, x)?;
        Ok(BatchReplay { kernels, sizes, status: status_at(b, s)?, events: Vec::new() })
    }

    pub fn queue_ladder(&mut self, b: &mut CandidateBuffers, s: &Arc<CudaStream>, x: &LadderInputs) -> Result<()> {
        self.events.push(super::timing_event(s)?);
        queue_ladder(self.kernels, b, s, x, self.sizes)?;
        self.events.push(super::timing_event(s)?);
        Ok(())
    }

    /// Queues the copies of the summary's counts; the four events.
    pub fn finish(self, b: &mut CandidateBuffers, s: &Arc<CudaStream>) -> Result<[CudaEvent; 4]> {
        b.fetch_counts(s)?;
        self.events.try_into().map_err(|e: Vec<CudaEvent>| anyhow::anyhow!("{} replay events, not 4", e.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bwa's default -m keeps reads of up to 288 bases (1 + 8 x 289 x 865 = 1,999,881 entries at
    /// most); -m 300 none that the ladder could take (two bases need 1 + 8 x 3 x 7 = 169).
    #[test]
    fn the_longest_read_follows_bwas_limit() {
        assert_eq!(max_len_for(2_000_000), 288);
        assert_eq!(max_len_for(300), 2);
        assert_eq!(max_len_for(0), 0);
        assert_eq!(max_len_for(i32::MAX), super::super::GPU_MAX_LEN);
    }

    /// Only where every gap costs more than a mismatch, a mismatch costs something, and bwa
    /// stops a mismatch past its best hit.
    #[test]
    fn the_options_decide_whether_it_applies() {
        let d = GapOptions::default();
        assert!(applies(&d));
        assert!(!applies(&GapOptions { s_gapo: d.s_mm, ..d }));
        assert!(!applies(&GapOptions { s_mm: 0, ..d }));
        assert!(!applies(&GapOptions { mode: d.mode | MODE_NONSTOP, ..d }));
    }
}
