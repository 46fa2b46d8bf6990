//! The summary `aln` prints on stderr after a run on GPUs: each GPU's kernel times and passes,
//! its share of the batches, why reads were aligned on the CPU, the start-up and how busy each
//! stage of the pipeline was.

use std::time::{Duration, Instant};

use super::gpus;
use super::stages::{Aligned, StageBusy};
use crate::gpu::inexact::PassKind;
use crate::gpu::{BatchTimes, GpuAligner, GuardTimes, HAND_ON_SHARE};

/// Prints the summary of a run on `gpus` (at least one), begun at `started`.
pub fn print(gpus: &[GpuAligner], aligned: &Aligned, busy: &StageBusy, index_load: Duration, started: Instant) {
    for gpu in gpus {
        let which = if gpus.len() > 1 { format!("GPU {} kernels", gpu.ordinal()) } else { "GPU kernels".to_string() };
        eprintln!("[bcuda aln] {which}: {}", kernels_line(gpu));
    }
    gpus::share_lines(gpus, &aligned.shares).iter().for_each(|line| eprintln!("{line}"));
    eprintln!("[bcuda aln] {}", cpu_reads_line(gpus, aligned.cpu_reads, started));
    eprintln!("[bcuda aln] {}", start_up_line(&gpus[0], busy, index_load));
    eprintln!(
        "[bcuda aln] stages busy: parse {:.2} s, pack {:.2} s, CPU completion {:.2} s, .sai {:.2} s",
        busy.parse.as_secs_f64(),
        busy.pack.as_secs_f64(),
        busy.complete.as_secs_f64(),
        busy.write.as_secs_f64()
    );
}

/// A team pass's `-m` guard of the ladder's rungs, where it ran: the reads it judged and bounded,
/// and what its teams' time in it held of the pass's SM-seconds.
fn guard_part(guard: &GuardTimes, pass_sm_s: f64) -> String {
    if guard.reads == 0 {
        return String::new();
    }
    let share = if pass_sm_s > 0.0 { 100.0 * guard.sm_s / pass_sm_s } else { 0.0 };
    format!(
        "; the -m guard judged {} reads and bounded {}, in {:.3} SM-s ({share:.1} % of the pass's)",
        guard.reads, guard.bounded, guard.sm_s
    )
}

/// A GPU's kernels: exact_match, the D arrays, each pass of the inexact search, the reads that
/// outgrew the last pass and when pass 1 gave up.
fn kernels_line(gpu: &GpuAligner) -> String {
    let t = gpu.totals;
    let passes: Vec<String> = gpu
        .passes()
        .iter()
        .enumerate()
        .map(|(p, pass)| {
            let searchers = match pass.kind {
                PassKind::Thread => format!("{} threads with {} entries each", pass.threads, pass.entries),
                PassKind::Warp => {
                    format!("{} teams of {} threads with {} entries each", pass.searchers(), pass.team, pass.entries)
                }
            };
            let rate = giga_per_s(t.pass_lookups[p], t.pass_ms[p]);
            format!(
                "pass {} {:.1} ms on {} reads ({searchers}; {:.2} G occurrence lookups, {rate:.1} G/s{})",
                p + 1,
                t.pass_ms[p],
                t.pass_reads[p],
                t.pass_lookups[p] as f64 / 1e9,
                guard_part(&t.guard[p], t.pass_sm_s[p])
            )
        })
        .collect();
    format!(
        "exact_match {:.1} ms ({} reads match exactly); inexact search {:.1} ms: D arrays {:.1} ms ({:.2} G occurrence lookups), {}{}{}{}; {} reads outgrew the last pass's stack{}",
        t.exact_ms,
        t.exact_reads,
        t.inexact_ms(),
        t.widths_ms,
        t.widths_lookups as f64 / 1e9,
        no_hit_part(gpu),
        replay_part(&t),
        passes.join(", "),
        proof_part(&t),
        t.stack_overflow_reads,
        match t.first_pass_gave_up {
            Some((b, finished, handed_on)) => format!("; pass 1 gave up on its reads by the end of batch {} of {} (it had handed on {handed_on} of the {finished} reads it finished, over {:.0} %), so the teams searched them", b + 1, t.batches, HAND_ON_SHARE * 100.0),
            None => String::new(),
        },
    )
}

/// The no-hit pass, when it ran: its time, the reads it tried and proved to have no hit, its
/// lookups (ends with a comma, before the passes).
fn no_hit_part(gpu: &GpuAligner) -> String {
    let t = gpu.totals;
    let max_lookups = gpu.inexact_switches().no_hit_budget;
    if max_lookups == 0 && t.no_hit_reads == 0 {
        return String::new();
    }
    let rate = giga_per_s(t.no_hit_lookups, t.no_hit_ms);
    format!(
        "no-hit pass {:.1} ms on {} reads: {} proved to have no hit (at most {max_lookups} lookups a read; {:.2} G occurrence lookups, {rate:.1} G/s), ",
        t.no_hit_ms,
        t.no_hit_reads,
        t.no_hit_proved,
        t.no_hit_lookups as f64 / 1e9
    )
}

/// The reads that occur whole through the candidates (`exact_replay`), when they ran: the
/// rung's and the replay's time together, the reads marked and answered, the lookups (ends with
/// a comma, before the passes).
fn replay_part(t: &BatchTimes) -> String {
    if t.replay_reads == 0 {
        return String::new();
    }
    let rate = giga_per_s(t.replay_rung_lookups + t.replay_lookups, t.replay_ms);
    format!(
        "replay of reads that occur whole {:.1} ms (rung and trees {:.1} ms): {} of {} answered ({:.2} G occurrence lookups in the rung, {:.2} G in the replay, {rate:.1} G/s), ",
        t.replay_ms,
        t.replay_rung_ms,
        t.replay_answered,
        t.replay_reads,
        t.replay_rung_lookups as f64 / 1e9,
        t.replay_lookups as f64 / 1e9
    )
}

/// The no-hit proof before the last pass (`proof_before_last`), when it ran (starts with a
/// comma, after the passes).
fn proof_part(t: &BatchTimes) -> String {
    if t.proof_reads == 0 {
        return String::new();
    }
    let rate = giga_per_s(t.proof_lookups, t.proof_ms);
    format!(
        ", and before the last pass the no-hit proof {:.1} ms: {} of {} reads proved to have no hit ({:.2} G occurrence lookups, {rate:.1} G/s; in {} batches a round outgrew its room, and the reads that lost a branch went on)",
        t.proof_ms,
        t.proof_proved,
        t.proof_reads,
        t.proof_lookups as f64 / 1e9,
        t.proof_overflows
    )
}

/// Occurrence lookups per second of kernel time, in billions (to compare with the GPU's
/// random-gather rate).
fn giga_per_s(lookups: u64, ms: f32) -> f64 {
    lookups as f64 / (ms as f64 / 1000.0).max(1e-9) / 1e9
}

/// The reads aligned on the CPU, by why, and the run's time.
fn cpu_reads_line(gpus: &[GpuAligner], cpu_reads: usize, started: Instant) -> String {
    let sum = |f: fn(&BatchTimes) -> usize| gpus.iter().map(|g| f(&g.totals)).sum::<usize>();
    let (stack, hits, limit, not_taken) = (
        sum(|t| t.stack_overflow_reads),
        sum(|t| t.hits_full_reads),
        sum(|t| t.entries_limit_reads),
        sum(|t| t.not_taken_reads),
    );
    format!(
        "{} reads aligned on the CPU: {stack} over the last pass's stack, {hits} over the GPU's hit list, {limit} where bwa's -m may stop inside a group of chains, {not_taken} the GPU does not take (empty or too long), {} in failed GPU batches; {:.2} s in all",
        cpu_reads,
        cpu_reads.saturating_sub(stack + hits + limit + not_taken),
        started.elapsed().as_secs_f64()
    )
}

/// The start-up: the index load while the first GPU opened, its kernels, the BWT's copy and
/// the search's scratch.
fn start_up_line(first: &GpuAligner, busy: &StageBusy, index_load: Duration) -> String {
    let st = first.startup;
    format!(
        "start-up {:.2} s: index loaded in {:.2} s while the GPU opened (context {:.2} s, kernels {:.2} s: {}, then loaded); BWT copied to the GPU, its occurrence sectors ({}) and interval table (depth {}) built in {:.2} s; the search's scratch allocated at the first batch in {:.2} s",
        busy.start_up.as_secs_f64(),
        index_load.as_secs_f64(),
        st.context_s,
        st.kernels_s,
        if st.kernels_cached { "from the kernel cache" } else { "compiled with NVRTC, cached for the next run" },
        match (st.occ_sectors, st.occ_pairs) {
            (true, true) => "on, with pairs",
            (true, false) => "on",
            _ => "off",
        },
        st.interval_depth,
        st.copy_s,
        st.scratch_s
    )
}
