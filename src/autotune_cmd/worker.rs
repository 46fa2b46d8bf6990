//! The autotune worker (`bcuda autotune-worker`), a process of its own so that a variant that
//! faults or hangs the GPU takes only it down: it holds the GPU and the reads, and answers the
//! parent's requests (one JSON line each way) by running the GPU part of aln with a variant's
//! kernels and comparing its answers with the unmodified kernels'.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda_autotune::hit_oracle::first_difference;
use bcuda_autotune::penalty::batch_penalty;
use serde::{Deserialize, Serialize};

use crate::gpu::tuned::{switches_from, KernelSwitches};
use crate::gpu::{GpuAligner, HostBatch, InexactSwitches, Switches};
use crate::reads::{ReadBatch, ReadBatchReader, ReadOptions};
use crate::sai::{AlnHit, GapOptions};

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    #[arg(long)]
    pub index: PathBuf,
    #[arg(long)]
    pub reads: PathBuf,
    #[arg(long, default_value_t = 159_744)]
    pub batch_size: usize,
}

/// A request to the worker: one variant (both kernels' sources, None: the unmodified inexact
/// kernels; every switch by name), on the training subset of a generation or the held-out batch.
#[derive(Serialize, Deserialize)]
pub struct Request {
    pub exact: String,
    pub inexact: Option<String>,
    pub switches: Vec<(String, u32)>,
    pub repeats: usize,
    pub held_out: bool,
    pub subset: usize,
}

#[derive(Serialize, Deserialize)]
pub enum Reply {
    /// `first_pass_gives_up`: whether pass 1's rule gave up on the training reads (see
    /// `run_worker`), so that every variant is timed without pass 1's search.
    Hello {
        device: String,
        cc: (i32, i32),
        #[serde(default)]
        first_pass_gives_up: bool,
    },
    Ran {
        penalty: u64,
        ms: f64,
    },
    WrongHits(String),
    Illegal(String),
    CompileError(String),
    Failed(String),
}

/// The training subset of generation `g`: `size` consecutive reads of the pool of `pool`
/// reads, starting at a place that moves with the generation (the same for every variant of
/// it; generation 0 starts at the beginning).
fn subset_range(g: usize, pool: usize, size: usize) -> std::ops::Range<usize> {
    let size = size.min(pool);
    let room = pool - size;
    let start = if room == 0 { 0 } else { (g as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) as usize % (room + 1) };
    let start = if g == 0 { 0 } else { start };
    start..start + size
}

/// Copies of the reads `range` of `pool`.
fn reads_of(pool: &ReadBatch, range: std::ops::Range<usize>) -> ReadBatch {
    let mut reads = ReadBatch::default();
    reads.extend_from(pool, range);
    reads
}

/// What the unmodified kernels answer on a set of reads: exact_match's intervals and every
/// read's hits (None: left to the CPU).
struct Expected {
    kl: Vec<(u64, u64)>,
    hits: Vec<Option<Vec<AlnHit>>>,
}

/// The worker: answers requests until stdin closes.
pub fn run_worker(args: WorkerArgs) -> Result<()> {
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.index, ".bwt"))?;
    let mut gpu = GpuAligner::new(&bwt, Switches::default(), 0)?;
    // Each run's answers are its own, never those of the run before (the reference's).
    gpu.poison_outputs();
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions { sequence_only: true, ..Default::default() })?;
    // Two batches of training reads (a batch-sized subset of them per generation), one held out.
    let mut pool = reader.next_batch(args.batch_size)?;
    let second = reader.next_batch(args.batch_size)?;
    pool.extend_from(&second, 0..second.len());
    let held_out = reader.next_batch(args.batch_size)?;
    if pool.is_empty() {
        bail!("{}: no reads", args.reads.display());
    }
    let held_out = if held_out.is_empty() { reads_of(&pool, 0..pool.len().min(args.batch_size)) } else { held_out };
    let opt = GapOptions::default();
    let plain = KernelSwitches::default();
    // The kernels on the GPU now (loading a module costs the driver's JIT): sources and switches.
    let mut loaded: Option<(String, Switches, String, InexactSwitches)> = None;
    fn load(
        gpu: &mut GpuAligner,
        loaded: &mut Option<(String, Switches, String, InexactSwitches)>,
        exact: &str,
        sw: Switches,
        inexact: &str,
        isw: InexactSwitches,
    ) -> Result<()> {
        let want = (exact.to_string(), sw, inexact.to_string(), isw);
        let now = loaded.take();
        if now.as_ref().is_none_or(|n| (&n.0, &n.1) != (&want.0, &want.1)) {
            gpu.set_exact_kernel(&want.0, want.1.clone())?;
        }
        if now.as_ref().is_none_or(|n| (&n.2, &n.3) != (&want.2, &want.3)) {
            gpu.set_inexact_kernels(&want.2, want.3.clone())?;
        }
        *loaded = Some(want);
        Ok(())
    }
    // Every variant is timed as aln runs the kernels: pass 1's rule on, from the state the
    // unmodified kernels bring it to over the training reads (at 1 Gbp human-like pass 1 has
    // given up by then and the teams search every read; on E. coli it never gives up).
    // Without it a faster pass 1 won here and gained aln nothing (docs/autotune.md).
    gpu.adapt_first_pass()?;
    load(
        &mut gpu,
        &mut loaded,
        crate::gpu::EXACT_MATCH_CU,
        plain.exact.clone(),
        crate::gpu::INEXACT_MATCH_CU,
        plain.inexact.clone(),
    )?;
    for first in (0..pool.len()).step_by(args.batch_size.max(1)) {
        let reads = reads_of(&pool, first..pool.len().min(first + args.batch_size));
        let flight = gpu.submit(HostBatch::new(&reads, &opt, gpu.switches().sequence_stride))?;
        gpu.collect(flight)?;
    }
    let rule = gpu.first_pass_rule()?;
    let expected = |gpu: &mut GpuAligner,
                    loaded: &mut Option<(String, Switches, String, InexactSwitches)>,
                    reads: &ReadBatch|
     -> Result<Expected> {
        load(
            gpu,
            loaded,
            crate::gpu::EXACT_MATCH_CU,
            plain.exact.clone(),
            crate::gpu::INEXACT_MATCH_CU,
            plain.inexact.clone(),
        )?;
        let (kl, hits, _) = run_gpu_part(gpu, reads, &opt, rule)?;
        Ok(Expected { kl, hits })
    };
    let expected_held = expected(&mut gpu, &mut loaded, &held_out)?;
    let mut subset = (usize::MAX, ReadBatch::default(), Expected { kl: Vec::new(), hits: Vec::new() });
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock, r: &Reply| -> Result<()> {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
        out.flush()?;
        Ok(())
    };
    say(
        &mut out,
        &Reply::Hello {
            device: gpu.device_name.clone(),
            cc: gpu.compute_capability,
            first_pass_gives_up: rule[1] != 0,
        },
    )?;
    for line in std::io::stdin().lock().lines() {
        let req: Request = serde_json::from_str(&line?)?;
        if !req.held_out && subset.0 != req.subset {
            // A new generation's reads: the unmodified kernels' answers on them first.
            let reads = reads_of(&pool, subset_range(req.subset, pool.len(), args.batch_size));
            let answers = expected(&mut gpu, &mut loaded, &reads)?;
            subset = (req.subset, reads, answers);
        }
        let (reads, want) = if req.held_out { (&held_out, &expected_held) } else { (&subset.1, &subset.2) };
        let inexact = req.inexact.as_deref().unwrap_or(crate::gpu::INEXACT_MATCH_CU);
        let reply = match switches_from(&req.switches) {
            Err(why) => Reply::Illegal(why),
            Ok(sw) => match load(&mut gpu, &mut loaded, &req.exact, sw.exact, inexact, sw.inexact) {
                Err(e) if format!("{e:#}").contains("NVRTC") => Reply::CompileError(format!("{e:#}")),
                Err(e) => Reply::Failed(format!("{e:#}")),
                Ok(()) => match time_variant(&mut gpu, reads, &opt, req.repeats, rule) {
                    Ok((kl, hits, ms)) => match first_difference(&want.hits, &hits) {
                        Some(mismatch) => Reply::WrongHits(mismatch.to_string()),
                        None => Reply::Ran { penalty: batch_penalty(&want.kl, &kl), ms },
                    },
                    Err(e) => Reply::Failed(format!("{e:#}")),
                },
            },
        };
        say(&mut out, &reply)?;
    }
    Ok(())
}

/// What the GPU part of aln gives on a set of reads: exact_match's intervals, every read's
/// hits (None: left to the CPU) and the GPU time of the kernels (ms).
type GpuPart = (Vec<(u64, u64)>, Vec<Option<Vec<AlnHit>>>, f64);

/// The GPU part of aln on `reads`, once: exact_match's intervals (a call of its own, for the
/// k,l penalty), the batch's hits through every pass, and the GPU time of the batch's
/// kernels (exact pass and every inexact pass, GPU events).
/// Pass 1's rule starts each run from `rule`, so that every run is timed the same.
fn run_gpu_part(gpu: &mut GpuAligner, reads: &ReadBatch, opt: &GapOptions, rule: [u64; 4]) -> Result<GpuPart> {
    let (k, l, _) = gpu.exact_match(reads)?;
    gpu.set_first_pass_rule(rule)?;
    let before = gpu.totals;
    let flight = gpu.submit(HostBatch::new(reads, opt, gpu.switches().sequence_stride))?;
    let (_, hits) = gpu.collect(flight)?;
    let after = gpu.totals;
    let ms = (after.exact_ms - before.exact_ms) + (after.inexact_ms() - before.inexact_ms());
    Ok((k.into_iter().zip(l).collect(), hits, ms as f64))
}

/// One warm-up, then the median GPU time of `repeats` runs; the answers of the warm-up.
fn time_variant(
    gpu: &mut GpuAligner,
    reads: &ReadBatch,
    opt: &GapOptions,
    repeats: usize,
    rule: [u64; 4],
) -> Result<GpuPart> {
    let (kl, hits, _) = run_gpu_part(gpu, reads, opt, rule)?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(1) {
        times.push(run_gpu_part(gpu, reads, opt, rule)?.2);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((kl, hits, times[times.len() / 2]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each generation's training subset: batch-sized, inside the pool, the first at its
    /// start, and moving from one generation to the next.
    #[test]
    fn training_subsets_move_with_the_generation() {
        assert_eq!(subset_range(0, 1000, 400), 0..400);
        let starts: std::collections::HashSet<usize> = (0..20).map(|g| subset_range(g, 1000, 400).start).collect();
        assert!(starts.len() > 10, "{starts:?}");
        assert!((0..100).all(|g| subset_range(g, 1000, 400).end <= 1000 && subset_range(g, 1000, 400).len() == 400));
        assert_eq!(subset_range(7, 300, 400), 0..300);
    }
}
