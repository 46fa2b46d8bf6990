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
use cudarc::driver::{CudaStream, PushKernelArg};

use super::candidate_buffers::{at, CandidateBuffers, Room, RungLaunch};
use super::candidates::{cfg, lookups_in, rounds_for, CandidateKernels, Penalties, CNT_OVERFLOW, COUNTERS};
use super::slot::BatchOnGpu;
use super::{buffers, BatchTimes, GPU_MAX_LEN};
use crate::search::no_hit::extra_edits;

/// Room per inexact read of a batch, and at least 32M branches a round: few reads reach the last
/// pass, but a random read's proof branches widely (14.5M branches in one round of a batch's
/// ancient-DNA reads at 3.1 Gbp); a read that loses a branch to a full round is left to the last
/// pass, the others' proofs stand. No nodes: the proof needs no paths.
const ROOM: Room = Room { branches: 16, min_branches: 1 << 25, nodes: 0, found: 8, tree_nodes: 0 };

/// What the proof reads and writes: the batch (the index, the inexact reads, their answers),
/// and the last pass's queue (its list's and its count's device addresses).
pub(super) struct ProofInputs<'a> {
    pub batch: &'a BatchOnGpu<'a>,
    pub queue: u64,
    pub queue_count: u64,
    /// The most extensions a read's proof takes (`proof_extensions`).
    pub most_extensions: u32,
}

/// Queues the proof on the reads of the last pass's queue, and takes those it answers out of
/// the queue (their hit count 0).
pub(super) fn queue_proof(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    inputs: &ProofInputs,
) -> Result<()> {
    let x = inputs.batch;
    let sizes = b.reserve(s, (x.n, x.n_codes), ROOM, 0)?;
    // Every read not in the queue stays out of the proof (0xff is no state).
    buffers::poison(s, b.status.reserve(s, 0)?.0)?;
    let rs = b.reads_arg(s, x.starts, x.lens)?;
    let status = at(&mut b.status, s)?;
    let (extra, max_len) = (extra_edits(x.opt), GPU_MAX_LEN as i32);
    let mut launch = s.launch_builder(&k.queued_reads);
    launch.arg(&inputs.queue).arg(&inputs.queue_count);
    launch.arg(x.codes).arg(x.starts).arg(x.lens).arg(x.max_diffs).arg(&extra);
    launch.arg(&max_len).arg(&rs.codes).arg(&rs.bound_start).arg(&rs.max_edits).arg(&status);
    // SAFETY: argument order and types match candidate_queued_reads' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_queued_reads")?;
    let (list, listed) = b.list(s, 0, x.n)?;
    let counters = b.counters_at(s)?;
    let (n32, exact_too, proof) = (x.n as u32, 0i32, 1i32);
    let mut launch = s.launch_builder(&k.bounds);
    launch.arg(x.words).arg(&x.primary).arg(x.l2).arg(&rs).arg(&Penalties::UNIT).arg(&n32).arg(&exact_too).arg(&proof);
    launch.arg(&rs.bounds).arg(&rs.budget).arg(&status).arg(&list).arg(&listed).arg(&counters);
    // SAFETY: argument order and types match candidate_bounds' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_bounds")?;
    let rung = RungLaunch {
        words: x.words,
        primary: x.primary,
        l2: x.l2,
        p: Penalties::UNIT,
        // A read's edit limit is at most 31 (candidate_queued_reads).
        rounds: rounds_for(x.max_len, 31),
        most_extensions: inputs.most_extensions,
        stop_at_any: true,
        keep_paths: false,
        sms: x.sms,
        n: x.n,
    };
    let (o, extensions) = b.queue_rung(k, s, &rs, &rung, sizes)?;
    let mut launch = s.launch_builder(&k.proof_end);
    launch.arg(&list).arg(&listed).arg(&o.any).arg(&extensions).arg(&inputs.most_extensions).arg(&status);
    // SAFETY: argument order and types match candidate_proof_end's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_proof_end")?;
    drop_proved(k, b, s, inputs, status)
}

/// The reads the proof answered out of the last pass's queue (list 1 holds the others, list 2's
/// count the answered).
fn drop_proved(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    inputs: &ProofInputs,
    status: u64,
) -> Result<()> {
    let x = inputs.batch;
    let ((kept, kept_count), (_, proved_count)) = (b.list(s, 1, x.n)?, b.list(s, 2, x.n)?);
    let mut launch = s.launch_builder(&k.drop_proved);
    launch.arg(&inputs.queue).arg(&inputs.queue_count).arg(&status).arg(x.n_hits).arg(&kept).arg(&kept_count);
    launch.arg(&proved_count);
    // SAFETY: argument order and types match candidate_drop_proved's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_drop_proved")?;
    let mut launch = s.launch_builder(&k.copy_list);
    launch.arg(&kept).arg(&kept_count).arg(&inputs.queue).arg(&inputs.queue_count);
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
