//! The kernels' times and counts, summed over a GPU's batches for aln's summary: what each
//! batch's events and counters say of exact_match, the D arrays and each pass.

use anyhow::Result;
use cudarc::driver::CudaEvent;

use super::slot::{
    GUARD_AT, GUARD_COUNTS, NO_HIT_COUNTERS, ORDER_COUNTERS, RESIDENCE_AT, RESIDENCE_COUNTS, WIDTHS_RESIDENCE_AT,
};
use super::MAX_PASSES;

/// Kernel times and counts (GPU events for the kernels, milliseconds), summed over batches.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchTimes {
    pub exact_ms: f32,
    /// The D arrays of every inexact read (read_widths), and their occurrence lookups.
    pub widths_ms: f32,
    pub widths_lookups: u64,
    /// Each pass of the inexact search (kernel times: a batch's later passes run beside the
    /// next batch's first pass, so they may add up to more than the time they took together).
    pub pass_ms: [f32; MAX_PASSES],
    pub exact_reads: usize,
    /// Reads each pass searched.
    pub pass_reads: [usize; MAX_PASSES],
    /// Reads left to the CPU, by why: the stack outgrew the last pass's, more hits than a
    /// team keeps (or the batch's long-hit area), bwa's `-m` may stop inside a group of
    /// chains, or the GPU does not take the read (empty, or longer than it takes).
    pub stack_overflow_reads: usize,
    pub hits_full_reads: usize,
    pub entries_limit_reads: usize,
    pub not_taken_reads: usize,
    /// Occurrence lookups (BWT blocks read: 32-byte sectors, or bwa's 64-byte lines) of each pass.
    pub pass_lookups: [u64; MAX_PASSES],
    /// What each pass held of the GPU, in SM-seconds: the time its blocks stayed on their SMs,
    /// each block counted as the share of an SM it takes (1 / the blocks an SM holds at once).
    /// Kernel times overlap across batches; this adds up to at most the SMs times the time.
    pub pass_sm_s: [f64; MAX_PASSES],
    /// Each pass's launches from their first block's start to their last block's end, summed:
    /// against [`BatchTimes::pass_sm_s`], the share of the SMs a launch held over its span.
    pub pass_span_s: [f64; MAX_PASSES],
    /// What read_widths held of the GPU, in SM-seconds (as [`BatchTimes::pass_sm_s`]).
    pub widths_sm_s: f64,
    /// Each team pass's `-m` guard of the ladder's rungs (a test hook): what it held of the GPU
    /// (its teams' time in it, as [`BatchTimes::pass_sm_s`]), the reads it judged and those whose
    /// bound it computed.
    pub guard: [GuardTimes; MAX_PASSES],
    pub batches: usize,
    /// The batch (from 0) in which pass 1 gave up on its reads, with the reads it had
    /// finished and handed on by the end of that batch (see `GpuAligner::adapt_first_pass`).
    pub first_pass_gave_up: Option<(usize, u64, u64)>,
    /// The no-hit pass ([`super::no_hit`]): its kernels' time, the reads it tried (those without an
    /// exact match), those it proved to have no hit, and its occurrence lookups.
    pub no_hit_ms: f32,
    pub no_hit_reads: usize,
    pub no_hit_proved: usize,
    pub no_hit_lookups: u64,
    /// The reads that occur whole through the candidates and the replay (`exact_replay`):
    /// the kernels' time (rung, trees, replay), the reads marked for them, those answered (the
    /// rest went on to pass 1), and the lookups of the rung and of the replay.
    pub replay_ms: f32,
    /// Of which the rung and the trees (the rest is the replay).
    pub replay_rung_ms: f32,
    pub replay_reads: usize,
    pub replay_answered: usize,
    pub replay_rung_lookups: u64,
    pub replay_lookups: u64,
    /// The no-hit proof before the last pass (`proof_before_last`): its kernels' time, the
    /// reads it tried, those it answered (no hit) and its lookups.
    pub proof_ms: f32,
    pub proof_reads: usize,
    pub proof_proved: usize,
    pub proof_lookups: u64,
    /// Batches where a round of the proof outgrew its room (the reads that lost a branch to it
    /// went on to the last pass).
    pub proof_overflows: usize,
    /// The host's time on the batches. One thread does all of it for a GPU, so it would pace
    /// the GPU if it took longer per batch than the kernels do.
    pub host: HostTimes,
}

/// See [`BatchTimes::guard`].
#[derive(Clone, Copy, Default, Debug)]
pub struct GuardTimes {
    pub sm_s: f64,
    pub reads: u64,
    pub bounded: u64,
}

/// See [`BatchTimes::host`].
#[derive(Clone, Copy, Default, Debug)]
pub struct HostTimes {
    /// Queueing the batches: their inputs copied into the staging buffers and their copies
    /// queued ([`super::GpuAligner::upload_s`]), then their kernels.
    pub queue_s: f64,
    /// Waiting for a batch's kernels and copies to finish before reading its answers.
    pub wait_s: f64,
    /// Turning the answers into hits and adding up the batch's counters.
    pub answers_s: f64,
}

/// One batch's kernel times, for aln's timeline.
pub(super) struct BatchKernels {
    pub exact_ms: f32,
    pub widths_ms: f32,
    /// Each pass's time and reads, e.g. "812 ms on 262144".
    pub passes: Vec<String>,
}

impl BatchTimes {
    /// The inexact search's kernels: the D arrays, the no-hit pass and every pass.
    pub fn inexact_ms(&self) -> f32 {
        self.widths_ms + self.no_hit_ms + self.replay_ms + self.proof_ms + self.pass_ms.iter().sum::<f32>()
    }

    /// Adds a batch's exact_match, D arrays and passes: `events` in pairs around them, the
    /// batch's `counters` and kernel counts (`lookups`: lookups, then residences), and the
    /// blocks an SM holds of each pass and of read_widths.
    pub(super) fn add_kernels(
        &mut self,
        events: &[CudaEvent],
        counters: &[u32],
        lookups: &[u64],
        (blocks_per_sm, widths_blocks_per_sm): (&[f64], f64),
    ) -> Result<BatchKernels> {
        let exact_ms = events[0].elapsed_ms(&events[1])?;
        let widths_ms = events[2].elapsed_ms(&events[3])?;
        self.exact_ms += exact_ms;
        self.widths_ms += widths_ms;
        self.widths_lookups += lookups[MAX_PASSES];
        self.widths_sm_s +=
            counts_at::<RESIDENCE_COUNTS>(lookups, WIDTHS_RESIDENCE_AT)[0] as f64 * 1e-9 / widths_blocks_per_sm;
        let n_passes = (events.len() - 4) / 2;
        let mut passes = Vec::new();
        for p in 0..n_passes {
            let ms = events[4 + 2 * p].elapsed_ms(&events[5 + 2 * p])?;
            passes.push(format!("{ms:.0} ms on {}", counters[2 * p]));
            self.pass_ms[p] += ms;
            self.pass_reads[p] += counters[2 * p] as usize;
            self.pass_lookups[p] += lookups[p];
            let [held_ns, first_start, last_end] = residence(lookups, p);
            let sm_share = blocks_per_sm.get(p).copied().unwrap_or(1.0);
            self.pass_sm_s[p] += held_ns as f64 * 1e-9 / sm_share;
            self.pass_span_s[p] += last_end.saturating_sub(!first_start) as f64 * 1e-9;
            let [guard_ns, judged, bounded] = counts_at(lookups, GUARD_AT + GUARD_COUNTS * p);
            let guard = &mut self.guard[p];
            guard.sm_s += guard_ns as f64 * 1e-9 / sm_share;
            guard.reads += judged;
            guard.bounded += bounded;
        }
        self.stack_overflow_reads += counters[2 * n_passes] as usize;
        Ok(BatchKernels { exact_ms, widths_ms, passes })
    }

    /// Adds a batch's no-hit pass (`events` around it); returns its part of the timeline's line.
    pub(super) fn add_no_hit(
        &mut self,
        [start, end]: &[CudaEvent; 2],
        counters: &[u32],
        lookups: &[u64],
    ) -> Result<String> {
        let ms = start.elapsed_ms(end)?;
        let (tried, proved) = (counters[ORDER_COUNTERS] as usize, counters[NO_HIT_COUNTERS + 3] as usize);
        self.no_hit_ms += ms;
        self.no_hit_reads += tried;
        self.no_hit_proved += proved;
        self.no_hit_lookups += lookups[MAX_PASSES + 1];
        Ok(format!(", no-hit {ms:.0} ms ({proved} of {tried} proved)"))
    }
}

/// Pass p's residence counts of a batch (`add_residence` in cuda/inexact_match.cu): its blocks'
/// nanoseconds on their SMs, the complement of its first block's start, its last block's end.
fn residence(kernel_counts: &[u64], p: usize) -> [u64; RESIDENCE_COUNTS] {
    counts_at(kernel_counts, RESIDENCE_AT + RESIDENCE_COUNTS * p)
}

/// The N kernel counts of a batch from `at` (a pass's residence, its `-m` guard's counts:
/// `rung_guard_proves` in cuda/rung_guard.cu).
fn counts_at<const N: usize>(kernel_counts: &[u64], at: usize) -> [u64; N] {
    std::array::from_fn(|j| kernel_counts[at + j])
}
