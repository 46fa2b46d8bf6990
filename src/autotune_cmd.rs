//! `bcuda autotune`: evolve the GPU kernels of `aln` (exact_match and the inexact kernels) for
//! the installed GPU.
//!
//! The engine (grammar, patches, operators, tabu, selection, restarts, sizing) is the
//! `bcuda-autotune` crate. Here: the evaluator, which sends each variant to a worker process
//! (`bcuda autotune-worker`) that compiles both kernels with NVRTC, runs the whole GPU part of
//! aln on a subset of the training reads (a fresh one each generation) and compares its
//! answers with the unmodified kernels': exact_match's intervals by the k,l penalty, every
//! read's hits by the hit-level oracle; the fitness is the GPU time of all passes (GPU
//! events). A worker that faults or hangs is killed and restarted. The budget is split into
//! restarts; their minimised winners are compared, the best is validated on held-out reads
//! and saved for this GPU, where `bcuda aln` finds it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bcuda_autotune::evolution::{Evaluator, Outcome, Settings, Variant};
use bcuda_autotune::genome::{barracuda_switches, inexact_switches, Genome, Sources, SwitchSpec};
use bcuda_autotune::grammar::Grammar;
use bcuda_autotune::hit_oracle::first_difference;
use bcuda_autotune::patch::apply;
use bcuda_autotune::penalty::batch_penalty;
use bcuda_autotune::{restarts, sizing};
use serde::{Deserialize, Serialize};

use crate::gpu::{GpuAligner, HostBatch, InexactSwitches, Switches};
use crate::reads::{ReadBatchReader, ReadOptions, ReadSeq};
use crate::sai::{AlnHit, GapOptions};

#[derive(clap::Args, Debug)]
pub struct AutotuneArgs {
    /// Index prefix (the FASTA path given to `index`) [the default index].
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Sample reads (FASTQ): the first two batches train (a batch-sized subset of them per
    /// generation), the third validates. `-`: standard input (copied to a temporary file,
    /// which the worker processes read).
    #[arg(long)]
    pub reads: PathBuf,
    /// Population size [sized from the budget].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::option_values::positive_count)]
    pub pop: Option<usize>,
    /// Generations per restart [sized from the budget, at least 10].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::option_values::positive_count)]
    pub gens: Option<usize>,
    /// Independent restarts within the budget (fewer when it is too short for them).
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = crate::option_values::positive_count)]
    pub restarts: usize,
    /// Evolve exact_match only (the inexact kernels stay as they are).
    #[arg(long)]
    pub exact_only: bool,
    /// Wall-clock budget, e.g. 30m, 90s, 2h.
    #[arg(long, default_value = "30m")]
    pub budget: String,
    /// Seed of the evolution.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::option_values::seed)]
    pub seed: u64,
    /// Reads per batch.
    #[arg(long, default_value_t = 159_744, allow_negative_numbers = true, value_parser = crate::option_values::positive_count)]
    pub batch_size: usize,
    /// Folder for the report (text and SVG plot).
    #[arg(long, default_value = "autotune-report")]
    pub report: PathBuf,
    /// Seconds a variant may take at most before its worker is killed (less where five times
    /// a probe variant's evaluation, at least 20 s, is less).
    #[arg(long, default_value_t = 60, allow_negative_numbers = true, value_parser = crate::option_values::positive_seconds)]
    pub variant_timeout: u64,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

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
struct Request {
    exact: String,
    inexact: Option<String>,
    switches: Vec<(String, u32)>,
    repeats: usize,
    held_out: bool,
    subset: usize,
}

#[derive(Serialize, Deserialize)]
enum Reply {
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

/// Both kernels' switches, as the GPU driver takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSwitches {
    pub exact: Switches,
    pub inexact: InexactSwitches,
}

/// Every switch autotune evolves: exact_match's 15, then the inexact kernels'.
pub fn all_switches(exact_only: bool) -> Vec<SwitchSpec> {
    let mut specs = barracuda_switches();
    if !exact_only {
        specs.extend(inexact_switches(InexactSwitches::DOMAINS, &InexactSwitches::default().values()));
    }
    specs
}

/// The kernel switches of a genome, as the GPU driver takes them; `Err` when they cannot run.
pub fn switches_of(genome: &Genome, specs: &[SwitchSpec]) -> Result<KernelSwitches, String> {
    switches_from(&genome.assignments(specs))
}

/// Switches by name: the inexact kernels' names go to them, the others to exact_match's.
fn switches_from(assignments: &[(String, u32)]) -> Result<KernelSwitches, String> {
    let mut sw = KernelSwitches { exact: Switches { cache_threads: None, ..Switches::default() }, inexact: InexactSwitches::default() };
    for (name, value) in assignments {
        if InexactSwitches::DOMAINS.iter().any(|d| d.0 == name) {
            sw.inexact.set(&format!("{name}={value}"))?;
        } else {
            sw.exact.set(&format!("{name}={value}"))?;
        }
    }
    match sw.exact.illegal().or(sw.inexact.illegal()) {
        Some(why) => Err(why.to_string()),
        None => Ok(sw),
    }
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

fn parse_budget(s: &str) -> Result<Duration> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num.parse().with_context(|| format!("--budget {s}: expected e.g. 30m"))?;
    Ok(Duration::from_secs(match unit {
        "" | "s" => n,
        "m" => 60 * n,
        "h" => 3600 * n,
        _ => bail!("--budget {s}: unit must be s, m or h"),
    }))
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
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    // Two batches of training reads (a batch-sized subset of them per generation), one held out.
    let mut pool = reader.next_batch(args.batch_size)?;
    pool.extend(reader.next_batch(args.batch_size)?);
    let held_out = reader.next_batch(args.batch_size)?;
    if pool.is_empty() {
        bail!("{}: no reads", args.reads.display());
    }
    let held_out = if held_out.is_empty() { pool[..pool.len().min(args.batch_size)].to_vec() } else { held_out };
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
    load(&mut gpu, &mut loaded, crate::gpu::EXACT_MATCH_CU, plain.exact.clone(), crate::gpu::INEXACT_MATCH_CU, plain.inexact.clone())?;
    for reads in pool.chunks(args.batch_size) {
        let flight = gpu.submit(HostBatch::new(reads, &opt, gpu.switches().sequence_stride))?;
        gpu.collect(flight)?;
    }
    let rule = gpu.first_pass_rule()?;
    let expected =
        |gpu: &mut GpuAligner, loaded: &mut Option<(String, Switches, String, InexactSwitches)>, reads: &[ReadSeq]| -> Result<Expected> {
            load(gpu, loaded, crate::gpu::EXACT_MATCH_CU, plain.exact.clone(), crate::gpu::INEXACT_MATCH_CU, plain.inexact.clone())?;
            let (kl, hits, _) = run_gpu_part(gpu, reads, &opt, rule)?;
            Ok(Expected { kl, hits })
        };
    let expected_held = expected(&mut gpu, &mut loaded, &held_out)?;
    let mut subset = (usize::MAX, Vec::new(), Expected { kl: Vec::new(), hits: Vec::new() });
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock, r: &Reply| -> Result<()> {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
        out.flush()?;
        Ok(())
    };
    say(&mut out, &Reply::Hello { device: gpu.device_name.clone(), cc: gpu.compute_capability, first_pass_gives_up: rule[1] != 0 })?;
    for line in std::io::stdin().lock().lines() {
        let req: Request = serde_json::from_str(&line?)?;
        if !req.held_out && subset.0 != req.subset {
            // A new generation's reads: the unmodified kernels' answers on them first.
            let reads = pool[subset_range(req.subset, pool.len(), args.batch_size)].to_vec();
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

/// The GPU part of aln on `reads`, once: exact_match's intervals (a call of its own, for the
/// k,l penalty), the batch's hits through every pass, and the GPU time of the batch's
/// kernels (exact pass and every inexact pass, GPU events).
/// Pass 1's rule starts each run from `rule`, so that every run is timed the same.
fn run_gpu_part(
    gpu: &mut GpuAligner,
    reads: &[ReadSeq],
    opt: &GapOptions,
    rule: [u64; 4],
) -> Result<(Vec<(u64, u64)>, Vec<Option<Vec<AlnHit>>>, f64)> {
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
    reads: &[ReadSeq],
    opt: &GapOptions,
    repeats: usize,
    rule: [u64; 4],
) -> Result<(Vec<(u64, u64)>, Vec<Option<Vec<AlnHit>>>, f64)> {
    let (kl, hits, _) = run_gpu_part(gpu, reads, opt, rule)?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(1) {
        times.push(run_gpu_part(gpu, reads, opt, rule)?.2);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((kl, hits, times[times.len() / 2]))
}

/// The parent's side: a worker process that is restarted when a variant kills or hangs it.
struct WorkerEvaluator {
    args: Vec<String>,
    child: Option<(Child, ChildStdin, Receiver<String>)>,
    timeout: Duration,
    held_out: bool,
    repeats: usize,
    /// The generation whose training subset requests name.
    subset: usize,
    device: Option<(String, (i32, i32))>,
    /// Whether pass 1's rule gave up on the training reads, as `aln` would (the worker's hello).
    first_pass_gives_up: Option<bool>,
    restarts: usize,
}

impl WorkerEvaluator {
    fn spawn(&mut self) -> Result<()> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The worker loads the index and computes the reference first.
        let hello = match rx.recv_timeout(Duration::from_secs(600)) {
            Ok(hello) => hello,
            Err(RecvTimeoutError::Disconnected) => {
                let status = child.wait()?;
                bail!("the autotune worker stopped before it was ready ({status}; its error is above)");
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                bail!("the autotune worker was not ready after 600 s");
            }
        };
        if let Reply::Hello { device, cc, first_pass_gives_up } = serde_json::from_str(&hello)? {
            self.device = Some((device, cc));
            self.first_pass_gives_up = Some(first_pass_gives_up);
        }
        self.child = Some((child, stdin, rx));
        Ok(())
    }

    fn ask(&mut self, req: &Request) -> Result<Reply, String> {
        if self.child.is_none() {
            self.spawn().map_err(|e| format!("{e:#}"))?;
        }
        let (_, stdin, rx) = self.child.as_mut().unwrap();
        let line = serde_json::to_string(req).unwrap();
        let sent = writeln!(stdin, "{line}").and_then(|_| stdin.flush());
        let reply = match sent {
            Ok(()) => rx.recv_timeout(self.timeout),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match reply {
            Ok(text) => {
                let reply: Reply = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                if matches!(reply, Reply::Failed(_)) {
                    // A CUDA fault poisons the context: the next variant gets a fresh worker.
                    self.kill();
                }
                Ok(reply)
            }
            Err(e) => {
                // Faulted or hung: a new worker for the next variant.
                self.kill();
                Err(format!("worker {}", if e == RecvTimeoutError::Timeout { "timed out" } else { "died" }))
            }
        }
    }

    fn kill(&mut self) {
        if let Some((mut child, _, _)) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            self.restarts += 1;
        }
    }
}

impl Evaluator for WorkerEvaluator {
    fn evaluate(&mut self, v: &Variant) -> Outcome {
        let req = Request {
            exact: v.exact.clone(),
            inexact: v.inexact.clone(),
            switches: v.switches.clone(),
            repeats: self.repeats,
            held_out: self.held_out,
            subset: self.subset,
        };
        match self.ask(&req) {
            Ok(Reply::Ran { penalty, ms }) => Outcome::Ran { penalty, ms },
            Ok(Reply::WrongHits(why)) => Outcome::WrongHits(why),
            Ok(Reply::Illegal(why)) => Outcome::Illegal(why),
            Ok(Reply::CompileError(log)) => Outcome::CompileError(log),
            Ok(Reply::Failed(e)) | Err(e) => Outcome::Fault(e),
            Ok(Reply::Hello { .. }) => Outcome::Fault("unexpected hello".into()),
        }
    }

    /// Compiles a generation's variants in parallel into the kernel cache, where the worker's
    /// compile then finds them; failures are left for the worker to report.
    fn prepare(&mut self, variants: &[Variant]) {
        use rayon::prelude::*;
        let Some((_, cc)) = self.device else { return };
        let arch = crate::gpu::arch_for(cc);
        variants.par_iter().for_each(|v| {
            if let Ok(sw) = switches_from(&v.switches) {
                let _ = crate::gpu::compile_cached(&v.exact, &sw.exact.defines(), arch);
                let _ =
                    crate::gpu::inexact_kernels::compile(v.inexact.as_deref().unwrap_or(crate::gpu::INEXACT_MATCH_CU), &sw.inexact, arch);
            }
        });
    }

    fn begin_generation(&mut self, generation: usize) {
        self.subset = generation;
    }
}

/// A kernel tuned for one GPU, as saved by autotune and loaded by aln.
#[derive(Serialize, Deserialize, Debug)]
pub struct Tuned {
    pub device: String,
    pub compute_capability: (i32, i32),
    pub switches: Vec<(String, u32)>,
    /// exact_match's source.
    pub source: String,
    /// The inexact kernels' source (absent in files of exact_match-only runs).
    #[serde(default)]
    pub inexact_source: Option<String>,
    pub speedup: f64,
    pub genome: Genome,
    /// The unmodified kernels it was evolved from ([`kernels_id`]; empty in older files).
    #[serde(default)]
    pub kernels: String,
}

/// A fingerprint (FNV-1a) of the unmodified CUDA sources: a file tuned from other kernels (an
/// earlier bcuda) may not fit this one's launches, whose arguments change with the kernels.
pub fn kernels_id() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in [crate::gpu::BWT_CUH, crate::gpu::EXACT_MATCH_CU, crate::gpu::INEXACT_MATCH_CU].iter().flat_map(|s| s.bytes().chain([0])) {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

fn tuned_path(device: &str, cc: (i32, i32)) -> PathBuf {
    tuned_path_in(&crate::gpu::cache_dir(), device, cc)
}

/// The tuned file of a GPU under the cache directory `cache` (scripts/variant-tuned.py writes
/// it there too).
fn tuned_path_in(cache: &std::path::Path, device: &str, cc: (i32, i32)) -> PathBuf {
    let name: String = device.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    cache.join("tuned").join(format!("{name}-sm{}{}.json", cc.0, cc.1))
}

/// The tuned kernels saved for this GPU, if any.
pub fn load_tuned(device: &str, cc: (i32, i32)) -> Option<Tuned> {
    let text = std::fs::read_to_string(tuned_path(device, cc)).ok()?;
    serde_json::from_str(&text).ok()
}

/// autotune tunes a GPU's kernels: without a usable GPU it stops at once, saying so (its
/// workers would each fail to open one).
fn check_gpu() -> Result<()> {
    if !crate::gpu::driver_present() {
        bail!("autotune: no usable GPU found (no CUDA driver: libcuda could not be loaded)");
    }
    match cudarc::driver::CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(()),
        Ok(_) => bail!("autotune: no usable GPU found (none visible)"),
        Err(e) => bail!("autotune: no usable GPU found ({e:?})"),
    }
}

pub fn run(args: AutotuneArgs) -> Result<()> {
    let budget = parse_budget(&args.budget)?;
    let started = std::time::Instant::now();
    let index = crate::default_index::named_or_default("autotune", args.index.as_deref())?;
    check_gpu()?;
    index.announce("autotune", args.quiet);
    let g = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
    let inexact_g = Grammar::parse(crate::gpu::INEXACT_MATCH_CU);
    let sources = Sources { exact: &g, inexact: (!args.exact_only).then_some(&inexact_g) };
    let specs = all_switches(args.exact_only);
    // The workers read the reads by name: standard input is copied to a file for them.
    let spooled = crate::input::is_stdin(&args.reads).then(crate::input::spool_stdin_named).transpose()?;
    let reads = spooled.as_ref().map_or(args.reads.clone(), |f| f.path().to_path_buf());
    let worker_args: Vec<String> = vec![
        "autotune-worker".into(),
        "--index".into(),
        index.prefix.display().to_string(),
        "--reads".into(),
        reads.display().to_string(),
        "--batch-size".into(),
        args.batch_size.to_string(),
    ];
    let mut eval = WorkerEvaluator {
        args: worker_args,
        child: None,
        timeout: Duration::from_secs(args.variant_timeout),
        held_out: false,
        repeats: 5,
        subset: 0,
        device: None,
        first_pass_gives_up: None,
        restarts: 0,
    };
    eval.spawn()?;
    let (device, cc) = eval.device.clone().context("the worker did not name its GPU")?;
    // Timing noise: spread of the reference's times. The reference that variants are timed
    // against is the unmodified kernels with their loop and bounds guards (as every variant
    // has them); the worker's expected answers come from the plain kernels, and the guards must
    // not change them.
    let reference = Genome::reference(&specs);
    let ref_variant =
        Variant { exact: apply(&g, &[]), inexact: sources.inexact.map(|ig| apply(ig, &[])), switches: reference.assignments(&specs) };
    let mut times = Vec::new();
    let t = std::time::Instant::now();
    for _ in 0..5 {
        match eval.evaluate(&ref_variant) {
            Outcome::Ran { ms, penalty: 0 } => times.push(ms),
            Outcome::Ran { penalty, .. } => {
                bail!("the guarded reference exact_match answers differently from the plain kernel (penalty {penalty})")
            }
            Outcome::WrongHits(why) => bail!("the guarded reference inexact kernels answer differently from the plain kernels: {why}"),
            other => bail!("the reference kernels do not run on {device}: {other:?}"),
        }
    }
    let run_s = t.elapsed().as_secs_f64() / 5.0;
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let noise = ((times[times.len() - 1] - times[0]) / times[times.len() / 2]).max(0.01);
    // What a new variant costs: its compile (in parallel over a generation) and its
    // evaluation (loading, warm-up, timed runs), measured on one single mutant.
    let mut probe = reference.clone();
    let last = specs.len() - 1;
    probe.switches[last] = specs[last].values.iter().copied().find(|v| *v != specs[last].default).flatten();
    let probe = Variant { switches: probe.assignments(&specs), ..ref_variant.clone() };
    let t = std::time::Instant::now();
    eval.prepare(std::slice::from_ref(&probe));
    let compile_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    eval.evaluate(&probe);
    let probe_s = t.elapsed().as_secs_f64();
    let per_variant = Duration::from_secs_f64(compile_s / rayon::current_num_threads() as f64 + probe_s.max(run_s));
    // A variant that takes five times as long is hung or far too slow to win: its worker is
    // killed then, not at the full --variant-timeout (at 1 Gbp five restarts at 60 s, each
    // followed by the new worker's start, took most of an 8-minute budget).
    eval.timeout = eval.timeout.min(Duration::from_secs_f64((5.0 * probe_s.max(run_s)).max(20.0)));
    let left = budget.saturating_sub(started.elapsed());
    let mut plan = sizing::plan(left, per_variant, args.restarts);
    if let Some(p) = args.pop {
        plan.population = p;
    }
    if let Some(n) = args.gens {
        plan.generations = n;
    }
    if !args.quiet {
        eprintln!(
            "[bcuda autotune] {device} (sm_{}{}): reference {:.4} ms (GPU time of {}; pass 1 {}), timing noise {:.1}%, about {:.2} s per variant (killed after {:.0} s): {} restarts of {} generations of {}",
            cc.0,
            cc.1,
            times[times.len() / 2],
            if args.exact_only { "exact_match" } else { "all GPU passes" },
            if eval.first_pass_gives_up == Some(true) { "given up, as aln's rule does on these reads" } else { "searching, as in aln on these reads" },
            100.0 * noise,
            per_variant.as_secs_f64(),
            eval.timeout.as_secs_f64(),
            plan.restarts,
            plan.generations,
            plan.population
        );
    }
    let settings =
        Settings { population: plan.population, generations: plan.generations, budget: plan.per_restart, seed: args.seed, noise };
    let quiet = args.quiet;
    let progress = crate::progress::Progress::new("generations", Some((plan.generations * plan.restarts) as u64), quiet);
    let mut done = 0u64;
    // When the current restart began (its history counts its own evaluations).
    let mut restart_start = (0, std::time::Instant::now());
    let runs = restarts::run(sources, &specs, &mut eval, &settings, plan.restarts, plan.per_restart, &mut |restart, generation, h| {
        done += 1;
        if restart_start.0 != restart {
            restart_start = (restart, std::time::Instant::now());
        }
        if !quiet {
            let (best, median) = h.generations.last().copied().unwrap_or((None, None));
            let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.4}"));
            let elapsed = started.elapsed().as_secs_f64();
            crate::progress::note(&format!(
                "[bcuda autotune] restart {} generation {generation}: best {} ms, median {} ms (reference {:.4}), {} evaluated, {:.1} per s, tabu hits {:.1}%, {:.0} s left",
                restart + 1,
                ms(best),
                ms(median),
                h.reference_ms,
                h.evaluated,
                h.evaluated as f64 / restart_start.1.elapsed().as_secs_f64().max(1e-3),
                100.0 * h.tabu_rate(),
                budget.as_secs_f64() - elapsed
            ));
            progress.set_message(format!("restart {} of {}", restart + 1, plan.restarts));
        }
        progress.advance(1, Some(done));
    });
    progress.finish();
    let describe = |w: &Genome| -> Vec<String> {
        let mut d: Vec<String> = w.patches.iter().map(|p| format!("exact_match: {}", p.describe(&g))).collect();
        d.extend(w.inexact_patches.iter().map(|p| format!("inexact: {}", p.describe(&inexact_g))));
        d
    };
    let winners: Vec<&Genome> = runs.iter().filter_map(|r| r.winner.as_ref()).collect();
    let shared = restarts::recurring(&winners, &specs, &describe);
    let winner = restarts::best(&runs).and_then(|r| r.winner.clone()).unwrap_or_else(|| reference.clone());

    // Validation on held-out reads: same answers (intervals and hits), speed-up over repeats.
    eval.held_out = true;
    eval.repeats = 11;
    let phenotype = bcuda_autotune::evolution::phenotype(sources, &specs, &winner);
    let held_ref = eval.evaluate(&ref_variant);
    let held_win = eval.evaluate(&phenotype);
    let (Outcome::Ran { ms: ref_ms, .. }, Outcome::Ran { penalty, ms: win_ms }) = (&held_ref, &held_win) else {
        bail!("validation on held-out reads failed: {held_ref:?} / {held_win:?}");
    };
    let speedup = ref_ms / win_ms;
    let changes = describe(&winner);
    let defs = phenotype.switches.clone();
    let summary = format!(
        "{:?} with {} patches [{}]; held-out penalty {penalty}, hits identical, speed-up {speedup:.3}x",
        defs,
        changes.len(),
        changes.join("; ")
    );
    std::fs::create_dir_all(&args.report)?;
    let mut text = String::new();
    for (r, run) in runs.iter().enumerate() {
        text += &format!("== restart {} (seed {})\n", r + 1, run.seed);
        let w = run
            .winner
            .as_ref()
            .map_or("none beat the reference".to_string(), |w| format!("{:?} [{}]", w.assignments(&specs), describe(w).join("; ")));
        text += &bcuda_autotune::report::text(&run.history, &w);
    }
    text += "== changes of the restarts' winners (how many winners have each)\n";
    for (change, n) in &shared {
        text += &format!("{n}\t{change}\n");
    }
    text += &format!("== final winner (fastest restart's, validated)\n{summary}\nworker restarts: {}\n", eval.restarts);
    std::fs::write(args.report.join("report.txt"), text)?;
    if let Some(run) = restarts::best(&runs).or(runs.first()) {
        std::fs::write(args.report.join("progress.svg"), bcuda_autotune::report::svg(&run.history))?;
    }
    if !args.quiet {
        eprintln!("[bcuda autotune] winner: {summary}; report in {}", args.report.display());
    }
    let tuned = Tuned {
        device: device.clone(),
        compute_capability: cc,
        switches: defs,
        source: phenotype.exact.clone(),
        inexact_source: phenotype.inexact.clone(),
        speedup,
        genome: winner,
        kernels: kernels_id(),
    };
    std::fs::write(args.report.join("winner.json"), serde_json::to_string_pretty(&tuned)?)?;
    if *penalty != 0 || speedup <= 1.0 + noise {
        eprintln!("[bcuda autotune] no variant beat the reference on held-out reads by more than the noise; nothing saved");
        return Ok(());
    }
    let path = tuned_path(&device, cc);
    std::fs::create_dir_all(path.parent().unwrap())?;
    let mut out = bcuda_output::Output::file(&path)?;
    out.write_all(serde_json::to_string_pretty(&tuned)?.as_bytes())?;
    out.commit()?;
    eprintln!("[bcuda autotune] saved for {device}: {}", path.display());
    Ok(())
}

/// Installs the tuned kernels for this GPU on `gpu`, when there are some; returns their speed-up
/// and whether the inexact kernels were tuned too (not only exact_match).
pub fn use_tuned(gpu: &mut GpuAligner) -> Result<Option<(f64, bool)>> {
    let Some(t) = load_tuned(&gpu.device_name, gpu.compute_capability) else { return Ok(None) };
    if t.kernels != kernels_id() {
        anyhow::bail!("it was tuned from the kernels of another bcuda: run bcuda autotune again");
    }
    let sw = switches_from(&t.switches).map_err(|e| anyhow::anyhow!("tuned kernels: {e}"))?;
    gpu.set_exact_kernel(&t.source, sw.exact)?;
    let inexact = t.inexact_source.is_some() || sw.inexact != InexactSwitches::default();
    if inexact {
        gpu.set_inexact_kernels(t.inexact_source.as_deref().unwrap_or(crate::gpu::INEXACT_MATCH_CU), sw.inexact)?;
    }
    Ok(Some((t.speedup, inexact)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcuda_autotune::genome::mutate;
    use rand::SeedableRng;

    /// Variants that the operators generate from exact_match.cu compile with NVRTC (when it
    /// is present): the grammar's typing and scope rules keep them well formed.
    #[test]
    fn generated_variants_compile_with_nvrtc() {
        if !crate::gpu::nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (CI installs it from PyPI; see .ci/run)");
            return;
        }
        let g = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
        let specs = barracuda_switches();
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let (mut compiled, mut illegal) = (0, 0);
        for _ in 0..40 {
            let mut genome = Genome::reference(&specs);
            for _ in 0..6 {
                genome = mutate(&genome, &specs, Sources::exact_only(&g), &mut rng);
            }
            let Ok(sw) = switches_of(&genome, &specs) else {
                illegal += 1;
                continue;
            };
            let source = apply(&g, &genome.patches);
            crate::gpu::compile(&source, &sw.exact.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{genome:?}\n{e}"));
            compiled += 1;
        }
        assert!(compiled >= 20, "only {compiled} legal variants ({illegal} illegal)");
    }

    /// The guarded unmodified kernel compiles under every switch value (one switch moved from
    /// its default at a time, and cache_threads with occ_par), and its bound of the BWT array
    /// is the array's length.
    #[test]
    fn guarded_reference_compiles_for_every_switch() {
        for seq_len in (1..2000).chain([1 << 20, (1 << 32) + 5]) {
            assert_eq!(bcuda_autotune::bounds::bwt_words(seq_len), bcuda_index::bwt::interleaved_words(seq_len), "{seq_len}");
        }
        if !crate::gpu::nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (CI installs it from PyPI; see .ci/run)");
            return;
        }
        let g = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
        let source = apply(&g, &[]);
        assert!(source.contains("gi_clamp("));
        let specs = barracuda_switches();
        let reference = Genome::reference(&specs);
        let mut genomes = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            for v in &spec.values {
                let mut genome = reference.clone();
                genome.switches[i] = *v;
                genomes.push(genome);
            }
        }
        let mut occ_par = reference.clone();
        occ_par.switches[1] = Some(4);
        occ_par.switches[3] = Some(1);
        genomes.push(occ_par);
        let mut compiled = 0;
        for genome in genomes {
            let Ok(sw) = switches_of(&genome, &specs) else { continue };
            crate::gpu::compile(&source, &sw.exact.defines(), Some("sm_90"))
                .unwrap_or_else(|e| panic!("{:?}\n{e}", genome.assignments(&specs)));
            compiled += 1;
        }
        assert!(compiled >= 30, "{compiled}");
    }

    /// The inexact kernels as autotune runs them: the guarded unmodified source under every
    /// value of their switches, and variants with patches of that source, compile with NVRTC.
    #[test]
    fn guarded_inexact_variants_compile_with_nvrtc() {
        if !crate::gpu::nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (CI installs it from PyPI; see .ci/run)");
            return;
        }
        let exact = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
        let g = Grammar::parse(crate::gpu::INEXACT_MATCH_CU);
        let source = apply(&g, &[]);
        assert!(source.contains("gi_clamp(") && source.contains("__syncthreads"));
        let specs = all_switches(false);
        let reference = Genome::reference(&specs);
        let mut defines = std::collections::BTreeSet::new();
        for (i, spec) in specs.iter().enumerate().skip(barracuda_switches().len()) {
            for v in &spec.values {
                let mut genome = reference.clone();
                genome.switches[i] = *v;
                if let Ok(sw) = switches_of(&genome, &specs) {
                    defines.extend(sw.inexact.modules().into_iter().map(|m| m.1));
                }
            }
        }
        assert!(
            defines.iter().any(|d| d.contains(&"-DMAX_TEAM=1024".to_string()))
                && defines.iter().any(|d| d.contains(&"-DMAX_TEAM=32".to_string())),
            "{defines:?}"
        );
        for d in &defines {
            crate::gpu::compile(&source, d, Some("sm_90")).unwrap_or_else(|e| panic!("{d:?}\n{e}"));
        }
        let sources = Sources { exact: &exact, inexact: Some(&g) };
        let seed = std::env::var("BCUDA_GI_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
        let n = std::env::var("BCUDA_GI_VARIANTS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut compiled = 0;
        for _ in 0..n {
            let mut genome = reference.clone();
            while genome.inexact_patches.len() < 4 {
                genome = mutate(&genome, &specs, sources, &mut rng);
            }
            // exact_match's switches may not go together (evolution scores such a genome as
            // failed).
            genome.switches[..15].copy_from_slice(&reference.switches[..15]);
            if switches_of(&genome, &specs).is_err() {
                genome.switches[15..].copy_from_slice(&reference.switches[15..]);
            }
            let sw = switches_of(&genome, &specs).unwrap();
            let v = bcuda_autotune::evolution::phenotype(sources, &specs, &genome);
            let (team, defines) = sw.inexact.modules().pop().expect("a team kernel");
            crate::gpu::compile(v.inexact.as_deref().unwrap(), &defines, Some("sm_90"))
                .unwrap_or_else(|e| panic!("teams of {team}, {:?}\n{e}", genome.inexact_patches));
            compiled += 1;
        }
        assert_eq!(compiled, n);
    }

    /// scripts/variant-tuned.py writes a file that aln takes, where aln looks for it: a `Tuned`
    /// with this build's kernels fingerprint, the default switches and the variant as the
    /// inexact source, at the GPU's tuned path under the cache directory.
    #[test]
    fn a_hand_made_variant_file_is_one_aln_takes() {
        let dir = std::env::temp_dir().join(format!("bcuda-variant-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let variant = dir.join("v.cu");
        std::fs::write(&variant, "// a variant\n").unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/variant-tuned.py");
        // The cache directory as cache_dir() finds it from XDG_CACHE_HOME, set for the script alone.
        let status = std::process::Command::new("python3")
            .args([script, variant.to_str().unwrap(), "--device", "Test GPU", "--cc", "9.0"])
            .env("XDG_CACHE_HOME", &dir)
            .status();
        let Ok(status) = status else {
            eprintln!("skipped: no python3");
            return;
        };
        assert!(status.success());
        let out = tuned_path_in(&dir.join("bcuda"), "Test GPU", (9, 0));
        let t: Tuned = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(t.kernels, kernels_id(), "the script's fingerprint must be kernels_id's");
        assert_eq!((t.device.as_str(), t.compute_capability), ("Test GPU", (9, 0)));
        assert_eq!(switches_from(&t.switches).unwrap().inexact, InexactSwitches::default());
        assert_eq!((t.source.as_str(), t.inexact_source.as_deref()), (crate::gpu::EXACT_MATCH_CU, Some("// a variant\n")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Switches by name go to their kernel; the inexact kernels' defaults are the driver's.
    #[test]
    fn switches_split_between_the_kernels() {
        let specs = all_switches(false);
        assert_eq!(specs.len(), 15 + InexactSwitches::DOMAINS.len());
        assert_eq!(
            switches_of(&Genome::reference(&specs), &specs).unwrap(),
            KernelSwitches { exact: Switches { cache_threads: None, ..Switches::default() }, inexact: InexactSwitches::default() }
        );
        let sw = switches_from(&[
            ("BLOCK_W".into(), 128),
            ("INEXACT_BLOCK_W".into(), 256),
            ("occ_ldg".into(), 1),
            ("first_max_pops".into(), 4096),
        ])
        .unwrap();
        assert_eq!((sw.exact.block_w, sw.inexact.block_w, sw.inexact.occ_ldg, sw.inexact.first_max_pops), (128, 256, true, 4096));
        assert!(switches_from(&[("INEXACT_BLOCK_W".into(), 100)]).is_err());
        assert_eq!(all_switches(true).len(), 15);
    }

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

    /// A tuned file from an exact_match-only run (no inexact source) still loads.
    #[test]
    fn tuned_files_without_inexact_kernels_load() {
        let t = Tuned {
            device: "d".into(),
            compute_capability: (9, 0),
            switches: vec![("BLOCK_W".into(), 64)],
            source: "s".into(),
            inexact_source: None,
            speedup: 1.5,
            genome: Genome::reference(&barracuda_switches()),
            kernels: kernels_id(),
        };
        let mut json: serde_json::Value = serde_json::to_value(&t).unwrap();
        json.as_object_mut().unwrap().remove("inexact_source");
        json["genome"].as_object_mut().unwrap().remove("inexact_patches");
        let back: Tuned = serde_json::from_value(json).unwrap();
        assert_eq!(back.inexact_source, None);
        assert!(back.genome.inexact_patches.is_empty());
    }

    /// A file from before the fingerprint, or from other kernels, is refused by use_tuned's
    /// check: its kernels may take other arguments than this bcuda passes.
    #[test]
    fn tuned_files_name_the_kernels_they_came_from() {
        let t = Tuned {
            device: "d".into(),
            compute_capability: (9, 0),
            switches: vec![],
            source: "s".into(),
            inexact_source: None,
            speedup: 1.5,
            genome: Genome::reference(&barracuda_switches()),
            kernels: kernels_id(),
        };
        let mut json: serde_json::Value = serde_json::to_value(&t).unwrap();
        assert_eq!(serde_json::from_value::<Tuned>(json.clone()).unwrap().kernels, kernels_id());
        json.as_object_mut().unwrap().remove("kernels");
        assert_ne!(serde_json::from_value::<Tuned>(json).unwrap().kernels, kernels_id());
        assert_eq!(kernels_id().len(), 16);
    }

    #[test]
    fn budgets_parse() {
        assert_eq!(parse_budget("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_budget("2d").is_err());
    }
}
