//! The no-hit proof before the last pass (the switch `proof_before_last`): the reads the team
//! pass hands to the last pass go through the candidates' proof (cuda/candidates.cu, one rung at
//! an edit each, each read's searches stopping at its first alignment), and those with no
//! alignment within their edit limit get their answer, no hit, without bwa's search.
//!
//! Why it is exact whatever bwa's `-m`: bwa's hits are alignments within the read's edit limit
//! (its `max_diff`, plus the gap extensions `-e` lets past it), so a read with none has no hit,
//! and bwa's `-m` can only stop a search early, losing hits it would have found. Why before the
//! last pass: the reads pass 2 hands on are the longest searches, and in ancient DNA many of
//! them are reads from no part of the genome, which bwa's search cannot rule out early (the D
//! array prunes little where short pieces of a random read occur in a large genome).

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::candidate_buffers::{at, CandidateBuffers, Room, MAX_ROUNDS};
use super::candidates::{
    cfg, lookups_in, CandidateKernels, OutputsArg, Penalties, ReadsArg, BLOCK, CNT_OVERFLOW, COUNTERS,
};
use super::exact_replay::{MOST_EXTENSIONS, ROUND_BLOCKS_PER_SM};
use super::{buffers, BatchTimes, GPU_MAX_LEN};
use crate::sai::GapOptions;
use crate::search::no_hit::extra_edits;

/// Room per inexact read of a batch, and at least 32M branches a round: few reads reach the last
/// pass, but a random read's proof branches widely (14.5M branches in one round of a batch's
/// ancient-DNA reads at 3.1 Gbp); a rung that outgrows it leaves its reads to the last pass. No
/// nodes: the proof needs no paths.
const ROOM: Room = Room { branches: 16, min_branches: 1 << 25, nodes: 0, found: 8, tree_nodes: 0 };
/// Every edit costs one; gap opens are not limited (bwa limits them: more alignments is safe).
const UNIT: Penalties = Penalties { s_mm: 1, s_gapo: 1, s_gape: 1, max_gapo: 1 << 30 };

/// What the proof reads and writes of a batch: the index, the inexact reads, their answers,
/// and the last pass's queue (its list's and its count's device addresses).
pub(super) struct ProofInputs<'a> {
    pub words: &'a CudaSlice<u32>,
    pub primary: u64,
    pub l2: &'a CudaSlice<u64>,
    pub codes: &'a CudaSlice<u8>,
    pub starts: &'a CudaSlice<u64>,
    pub lens: &'a CudaSlice<u16>,
    pub max_diffs: &'a CudaSlice<i32>,
    pub n_hits: &'a CudaSlice<i32>,
    pub queue: u64,
    pub queue_count: u64,
    pub n: usize,
    pub n_codes: usize,
    pub max_len: usize,
    pub opt: &'a GapOptions,
    pub sms: usize,
}

/// Queues the proof on the reads of the last pass's queue, and takes those it answers out of
/// the queue (their hit count 0).
pub(super) fn queue_proof(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &ProofInputs,
) -> Result<()> {
    let sizes = b.reserve(s, (x.n, x.n_codes), ROOM, 0)?;
    // Every read not in the queue stays out of the proof (0xff is no state).
    buffers::poison(s, b.status.reserve(s, 0)?.0)?;
    let rs = ReadsArg {
        codes: at(&mut b.seq, s)?,
        code_start: super::candidates::ptr(x.starts, s),
        len: super::candidates::ptr(x.lens, s),
        bounds: at(&mut b.bounds, s)?,
        bound_start: at(&mut b.bound_start, s)?,
        budget: at(&mut b.budget, s)?,
        max_edits: at(&mut b.max_edits, s)?,
    };
    let status = at(&mut b.status, s)?;
    let (extra, max_len) = (extra_edits(x.opt), GPU_MAX_LEN as i32);
    let mut launch = s.launch_builder(&k.queued_reads);
    launch.arg(&x.queue).arg(&x.queue_count).arg(x.codes).arg(x.starts).arg(x.lens).arg(x.max_diffs).arg(&extra);
    launch.arg(&max_len).arg(&rs.codes).arg(&rs.bound_start).arg(&rs.max_edits).arg(&status);
    // SAFETY: argument order and types match candidate_queued_reads' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_queued_reads")?;
    let (list, listed) = b.list(s, 0, x.n)?;
    let counters = b.counters_at(s)?;
    let (n32, exact_too, proof) = (x.n as u32, 0i32, 1i32);
    let mut launch = s.launch_builder(&k.bounds);
    launch.arg(x.words).arg(&x.primary).arg(x.l2).arg(&rs).arg(&UNIT).arg(&n32).arg(&exact_too).arg(&proof);
    launch.arg(&rs.bounds).arg(&rs.budget).arg(&status).arg(&list).arg(&listed).arg(&counters);
    // SAFETY: argument order and types match candidate_bounds' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_bounds")?;
    run_rung(k, b, s, x, (&rs, list, listed, counters, sizes))?;
    drop_proved(k, b, s, x, status)
}

/// The proof's rung over the listed reads: seed, the rounds (each read's stopping at its first
/// alignment), proof_end.
fn run_rung(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &ProofInputs,
    (rs, list, listed, counters, sizes): (&ReadsArg, u64, u64, u64, [usize; 4]),
) -> Result<()> {
    let mut o = OutputsArg {
        next: at(&mut b.branches[0], s)?,
        next_capacity: sizes[0] as u32,
        _pad0: 0,
        nodes: 0,
        node_capacity: 0,
        _pad1: 0,
        found: at(&mut b.found, s)?,
        found_capacity: sizes[2] as u32,
        _pad2: 0,
        counters,
        best: at(&mut b.best, s)?,
        any: at(&mut b.any, s)?,
        found_head: 0,
        found_next: 0,
    };
    let (round_counts, extensions) = (at(&mut b.counts, s)?, at(&mut b.extensions, s)?);
    let mut launch = s.launch_builder(&k.seed);
    launch.arg(x.l2).arg(rs).arg(&UNIT).arg(&list).arg(&listed).arg(&round_counts).arg(&o.next).arg(&o);
    launch.arg(&extensions);
    // SAFETY: argument order and types match candidate_seed's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_seed")?;
    let branches = [o.next, at(&mut b.branches[1], s)?];
    let blocks = (ROUND_BLOCKS_PER_SM * x.sms) as u32;
    let grid = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
    let (most, stop_at_any) = (MOST_EXTENSIONS, 1i32);
    // A branch extends once a read base and once a deleted base (at most 31 edits).
    for round in 0..(x.max_len + 33).min(MAX_ROUNDS) {
        o.next = branches[(round + 1) % 2];
        let r32 = round as u32;
        let mut launch = s.launch_builder(&k.round);
        launch.arg(x.words).arg(&x.primary).arg(x.l2).arg(rs).arg(&UNIT).arg(&r32).arg(&branches[round % 2]);
        launch.arg(&round_counts).arg(&o).arg(&extensions).arg(&most).arg(&stop_at_any);
        // SAFETY: argument order and types match candidate_round's signature.
        unsafe { launch.launch(grid) }.context("launching candidate_round")?;
    }
    let status = at(&mut b.status, s)?;
    let mut launch = s.launch_builder(&k.proof_end);
    launch.arg(&list).arg(&listed).arg(&o.any).arg(&extensions).arg(&most).arg(&counters).arg(&status);
    // SAFETY: argument order and types match candidate_proof_end's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_proof_end")?;
    Ok(())
}

/// The reads the proof answered out of the last pass's queue (list 1 holds the others, list 2's
/// count the answered).
fn drop_proved(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &ProofInputs,
    status: u64,
) -> Result<()> {
    let ((kept, kept_count), (_, proved_count)) = (b.list(s, 1, x.n)?, b.list(s, 2, x.n)?);
    let mut launch = s.launch_builder(&k.drop_proved);
    launch.arg(&x.queue).arg(&x.queue_count).arg(&status).arg(x.n_hits).arg(&kept).arg(&kept_count);
    launch.arg(&proved_count);
    // SAFETY: argument order and types match candidate_drop_proved's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_drop_proved")?;
    let mut launch = s.launch_builder(&k.copy_list);
    launch.arg(&kept).arg(&kept_count).arg(&x.queue).arg(&x.queue_count);
    // SAFETY: argument order and types match candidate_copy_list's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_copy_list")?;
    Ok(())
}

/// Adds a fetched batch's proof to the totals: its events, the reads it tried and answered and
/// its lookups. Returns its words for the kernel line.
pub(super) fn add_to(t: &mut BatchTimes, b: &CandidateBuffers, e: &[cudarc::driver::CudaEvent; 2]) -> Result<String> {
    let ms = e[0].elapsed_ms(&e[1])?;
    let counts = b.list_counts.read(3)?;
    let (tried, proved) = (counts[0] as usize, counts[2] as usize);
    t.proof_ms += ms;
    t.proof_reads += tried;
    t.proof_proved += proved;
    let counters = b.counters.read(COUNTERS)?;
    t.proof_lookups += lookups_in(counters);
    t.proof_overflows += usize::from(counters[CNT_OVERFLOW] != 0);
    Ok(format!(", proof before the last pass {ms:.0} ms ({proved} of {tried} proved)"))
}
