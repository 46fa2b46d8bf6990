//! The autotune worker (`bcuda autotune-worker`), a process of its own so that a variant that
//! faults or hangs the GPU takes only it down: it holds the GPU and the reads, and answers the
//! parent's requests (one JSON line each way) by running the GPU part of aln with a variant's
//! kernels and comparing its answers with the unmodified kernels'.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

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
fn reads_of(pool: &ReadBatch, range: Range<usize>) -> ReadBatch {
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

/// The reads of `args`: two batches of training reads (a batch-sized subset of them per
/// generation), then up to [`HELD_OUT_BATCHES`] of aln's batches held out (the first training
/// batch when there are no more).
fn training_and_held_out(args: &WorkerArgs) -> Result<(ReadBatch, ReadBatch)> {
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions { sequence_only: true, ..Default::default() })?;
    let mut pool = reader.next_batch(args.batch_size)?;
    let second = reader.next_batch(args.batch_size)?;
    pool.extend_from(&second, 0..second.len());
    let mut held_out = ReadBatch::default();
    for _ in 0..HELD_OUT_BATCHES {
        let batch = reader.next_batch(crate::aln::CPU_BATCH)?;
        if batch.is_empty() {
            break;
        }
        held_out.extend_from(&batch, 0..batch.len());
    }
    if pool.is_empty() {
        bail!("{}: no reads", args.reads.display());
    }
    if held_out.is_empty() {
        held_out = reads_of(&pool, 0..pool.len().min(args.batch_size));
    }
    Ok((pool, held_out))
}

/// The worker: answers requests until stdin closes.
pub fn run_worker(args: WorkerArgs) -> Result<()> {
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.index, ".bwt"))?;
    let mut gpu = GpuAligner::new(&bwt, Switches::default(), 0)?;
    // Each run's answers are its own, never those of the run before (the reference's).
    gpu.poison_outputs();
    let (pool, held_out) = training_and_held_out(&args)?;
    let held_batches = held_out_batches(held_out.len(), crate::aln::CPU_BATCH, gpu.depth());
    let opt = GapOptions::default();
    // The reference runs the default kernels as this GPU took them at start-up (the occurrence
    // sectors off where they do not fit its memory).
    let plain = KernelSwitches { inexact: gpu.inexact_switches().clone(), ..KernelSwitches::default() };
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
                    reads: &ReadBatch,
                    batches: Option<&[Range<usize>]>|
     -> Result<Expected> {
        load(
            gpu,
            loaded,
            crate::gpu::EXACT_MATCH_CU,
            plain.exact.clone(),
            crate::gpu::INEXACT_MATCH_CU,
            plain.inexact.clone(),
        )?;
        let kl = exact_intervals(gpu, reads)?;
        let (hits, _) = run_once(gpu, reads, batches, &opt, rule)?;
        Ok(Expected { kl, hits })
    };
    let expected_held = expected(&mut gpu, &mut loaded, &held_out, Some(&held_batches))?;
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
            let answers = expected(&mut gpu, &mut loaded, &reads, None)?;
            subset = (req.subset, reads, answers);
        }
        let (reads, want, batches) = if req.held_out {
            (&held_out, &expected_held, Some(held_batches.as_slice()))
        } else {
            (&subset.1, &subset.2, None)
        };
        let inexact = req.inexact.as_deref().unwrap_or(crate::gpu::INEXACT_MATCH_CU);
        let reply = match switches_from(&req.switches) {
            Err(why) => Reply::Illegal(why),
            Ok(sw) => match load(&mut gpu, &mut loaded, &req.exact, sw.exact, inexact, sw.inexact) {
                Err(e) if format!("{e:#}").contains("NVRTC") => Reply::CompileError(format!("{e:#}")),
                Err(e) => Reply::Failed(format!("{e:#}")),
                Ok(()) => match time_variant(&mut gpu, reads, batches, &opt, req.repeats, rule) {
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

/// Every read's hits (None: left to the CPU) and the run's time (ms).
type Timed = (Vec<Option<Vec<AlnHit>>>, f64);

/// exact_match's interval of every read of `reads` (a call of its own, for the k,l penalty).
fn exact_intervals(gpu: &mut GpuAligner, reads: &ReadBatch) -> Result<Vec<(u64, u64)>> {
    let (k, l, _) = gpu.exact_match(reads)?;
    Ok(k.into_iter().zip(l).collect())
}

/// The GPU part of aln on `reads`, once: as aln runs `batches` where given ([`run_as_aln`]),
/// else `reads` as one batch ([`run_one_batch`]). Pass 1's rule starts each run from `rule`,
/// so that every run is timed the same.
fn run_once(
    gpu: &mut GpuAligner,
    reads: &ReadBatch,
    batches: Option<&[Range<usize>]>,
    opt: &GapOptions,
    rule: [u64; 4],
) -> Result<Timed> {
    gpu.set_first_pass_rule(rule)?;
    match batches {
        None => run_one_batch(gpu, reads, opt),
        Some(batches) => run_as_aln(gpu, reads, batches, opt),
    }
}

/// `reads` as one batch through every pass: the hits and the GPU time of the batch's kernels
/// (exact pass and every inexact pass, GPU events).
fn run_one_batch(gpu: &mut GpuAligner, reads: &ReadBatch, opt: &GapOptions) -> Result<Timed> {
    let before = gpu.totals;
    let flight = gpu.submit(HostBatch::new(reads, opt, gpu.switches().sequence_stride))?;
    let (_, hits) = gpu.collect(flight)?;
    let after = gpu.totals;
    let ms = (after.exact_ms - before.exact_ms) + (after.inexact_ms() - before.inexact_ms());
    Ok((hits, ms as f64))
}

/// Held-out batches (of `aln`'s batch size) read after the training pool: with several, the
/// winner is timed as `aln` runs it, its batches overlapping on the GPU.
const HELD_OUT_BATCHES: usize = 4;

/// The held-out reads' batches as `aln` deals them: of `batch_size` reads, or, where the reads
/// are fewer than `depth` batches, `depth` equal parts, so that as many batches as `aln` keeps
/// on the GPU overlap.
fn held_out_batches(n: usize, batch_size: usize, depth: usize) -> Vec<Range<usize>> {
    let size = if n >= depth * batch_size { batch_size } else { n.div_ceil(depth.max(1)).max(1) };
    (0..n).step_by(size).map(|start| start..(start + size).min(n)).collect()
}

/// The GPU part of aln on `reads` as aln runs it: `batches` submitted with as many on the GPU
/// as it holds (the next one submitted as the oldest is collected): every read's hits, and the
/// wall time from the first submit to the last collect (aln's GPU busy). One batch alone, which the
/// training runs time, misses how a variant's passes overlap the next batches': a variant
/// 1.156x faster alone made aln 3-6 % slower on the H100 (docs/autotune.md).
fn run_as_aln(gpu: &mut GpuAligner, reads: &ReadBatch, batches: &[Range<usize>], opt: &GapOptions) -> Result<Timed> {
    let stride = gpu.switches().sequence_stride;
    let host: Vec<HostBatch> =
        batches.iter().map(|r| HostBatch::new(&reads_of(reads, r.clone()), opt, stride)).collect();
    let mut hits = Vec::with_capacity(reads.len());
    let mut in_flight = VecDeque::new();
    let started = Instant::now();
    for batch in host {
        if in_flight.len() == gpu.depth() {
            hits.extend(gpu.collect(in_flight.pop_front().expect("a batch in flight"))?.1);
        }
        in_flight.push_back(gpu.submit(batch)?);
    }
    while let Some(flight) = in_flight.pop_front() {
        hits.extend(gpu.collect(flight)?.1);
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    Ok((hits, ms))
}

/// exact_match's intervals, then one warm-up and the median time of `repeats` runs (as aln
/// runs `batches` where given, else `reads` as one batch); the answers of the warm-up.
fn time_variant(
    gpu: &mut GpuAligner,
    reads: &ReadBatch,
    batches: Option<&[Range<usize>]>,
    opt: &GapOptions,
    repeats: usize,
    rule: [u64; 4],
) -> Result<GpuPart> {
    let kl = exact_intervals(gpu, reads)?;
    let (hits, _) = run_once(gpu, reads, batches, opt, rule)?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(1) {
        times.push(run_once(gpu, reads, batches, opt, rule)?.1);
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

    /// The held-out batches cover every read once, in order: of the batch size where there are
    /// enough reads for the GPU's slots, else as many equal parts as it has slots.
    #[test]
    fn held_out_batches_fill_the_gpus_slots() {
        let cover = |b: &[Range<usize>]| b.iter().flat_map(|r| r.clone()).collect::<Vec<_>>();
        let four = held_out_batches(4 * 100, 100, 4);
        assert_eq!(four, [0..100, 100..200, 200..300, 300..400]);
        let more = held_out_batches(450, 100, 4);
        assert_eq!((more.len(), more.last().cloned()), (5, Some(400..450)));
        let one = held_out_batches(100, 100, 4);
        assert_eq!(one, [0..25, 25..50, 50..75, 75..100]);
        let odd = held_out_batches(10, 100, 4);
        assert_eq!(cover(&odd), (0..10).collect::<Vec<_>>());
        assert_eq!(odd.len(), 4);
        assert_eq!(held_out_batches(3, 100, 4), [0..1, 1..2, 2..3]);
        assert!(held_out_batches(0, 100, 4).is_empty());
    }
}
