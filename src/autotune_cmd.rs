//! `bcuda autotune`: evolve the exact_match kernel for the installed GPU.
//!
//! The engine (grammar, patches, operators, tabu, selection) is the `bcuda-autotune` crate.
//! Here: the evaluator, which sends each variant to a worker process (`bcuda autotune-worker`)
//! that compiles it with NVRTC, runs it on a real batch of reads and compares its intervals
//! with the unmodified kernel's; a worker that faults or hangs is killed and restarted. After
//! the evolution the winner is minimised, validated on held-out reads and saved for this GPU,
//! where `bcuda aln` finds it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bcuda_autotune::evolution::{Evaluator, Evolution, Outcome, Settings};
use bcuda_autotune::genome::{barracuda_switches, Genome, SwitchSpec};
use bcuda_autotune::grammar::Grammar;
use bcuda_autotune::patch::apply;
use bcuda_autotune::penalty::batch_penalty;
use serde::{Deserialize, Serialize};

use crate::gpu::{GpuAligner, Switches};
use crate::reads::{ReadBatchReader, ReadOptions, ReadSeq};

#[derive(clap::Args, Debug)]
pub struct AutotuneArgs {
    /// Index prefix (the FASTA path given to `index`) [the default index].
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Sample reads (FASTQ): the first batch evolves, the second validates.
    #[arg(long)]
    pub reads: PathBuf,
    /// Population size.
    #[arg(long, default_value_t = 1000)]
    pub pop: usize,
    /// Generations.
    #[arg(long, default_value_t = 50)]
    pub gens: usize,
    /// Wall-clock budget, e.g. 30m, 90s, 2h.
    #[arg(long, default_value = "30m")]
    pub budget: String,
    /// Seed of the evolution.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reads per batch.
    #[arg(long, default_value_t = 159_744)]
    pub batch_size: usize,
    /// Folder for the report (text and SVG plot).
    #[arg(long, default_value = "autotune-report")]
    pub report: PathBuf,
    /// Seconds a variant may take before its worker is killed.
    #[arg(long, default_value_t = 60)]
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

/// A request to the worker: one variant, on the training or the held-out batch.
#[derive(Serialize, Deserialize)]
struct Request {
    source: String,
    switches: Vec<(String, u32)>,
    repeats: usize,
    held_out: bool,
}

#[derive(Serialize, Deserialize)]
enum Reply {
    Hello { device: String, cc: (i32, i32) },
    Ran { penalty: u64, ms: f64 },
    Illegal(String),
    CompileError(String),
    Failed(String),
}

/// The kernel switches of a genome, as the GPU driver takes them; `Err` when they cannot run.
pub fn switches_of(genome: &Genome, specs: &[SwitchSpec]) -> Result<Switches, String> {
    switches_from(&genome.assignments(specs))
}

fn switches_from(assignments: &[(String, u32)]) -> Result<Switches, String> {
    let mut sw = Switches { cache_threads: None, ..Switches::default() };
    for (name, value) in assignments {
        sw.set(&format!("{name}={value}"))?;
    }
    match sw.illegal() {
        Some(why) => Err(why.to_string()),
        None => Ok(sw),
    }
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

/// The worker: answers requests until stdin closes.
pub fn run_worker(args: WorkerArgs) -> Result<()> {
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.index, ".bwt"))?;
    let mut gpu = GpuAligner::new(&bwt, Switches::default(), 0)?;
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let train = reader.next_batch(args.batch_size)?;
    let held_out = reader.next_batch(args.batch_size)?;
    if train.is_empty() {
        bail!("{}: no reads", args.reads.display());
    }
    let held_out = if held_out.is_empty() { train.clone() } else { held_out };
    let reference = |gpu: &mut GpuAligner, reads: &[ReadSeq]| -> Result<Vec<(u64, u64)>> {
        let (k, l, _) = gpu.exact_match(reads)?;
        Ok(k.into_iter().zip(l).collect())
    };
    let ref_train = reference(&mut gpu, &train)?;
    let ref_held = reference(&mut gpu, &held_out)?;
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock, r: &Reply| -> Result<()> {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
        out.flush()?;
        Ok(())
    };
    say(&mut out, &Reply::Hello { device: gpu.device_name.clone(), cc: gpu.compute_capability })?;
    for line in std::io::stdin().lock().lines() {
        let req: Request = serde_json::from_str(&line?)?;
        let reply = match switches_from(&req.switches) {
            Err(why) => Reply::Illegal(why),
            Ok(sw) => match gpu.set_exact_kernel(&req.source, sw) {
                Err(e) if format!("{e:#}").contains("NVRTC") => Reply::CompileError(format!("{e:#}")),
                Err(e) => Reply::Failed(format!("{e:#}")),
                Ok(()) => {
                    let (reads, expected) = if req.held_out { (&held_out, &ref_held) } else { (&train, &ref_train) };
                    match time_variant(&mut gpu, reads, req.repeats) {
                        Ok((kl, ms)) => Reply::Ran { penalty: batch_penalty(expected, &kl), ms },
                        Err(e) => Reply::Failed(format!("{e:#}")),
                    }
                }
            },
        };
        say(&mut out, &reply)?;
    }
    Ok(())
}

/// One warm-up, then the median kernel time of `repeats` runs (GPU events).
fn time_variant(gpu: &mut GpuAligner, reads: &[ReadSeq], repeats: usize) -> Result<(Vec<(u64, u64)>, f64)> {
    let (k, l, _) = gpu.exact_match(reads)?;
    let mut times = Vec::new();
    for _ in 0..repeats.max(1) {
        times.push(gpu.exact_match(reads)?.2 as f64);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((k.into_iter().zip(l).collect(), times[times.len() / 2]))
}

/// The parent's side: a worker process that is restarted when a variant kills or hangs it.
struct WorkerEvaluator {
    args: Vec<String>,
    child: Option<(Child, ChildStdin, Receiver<String>)>,
    timeout: Duration,
    held_out: bool,
    repeats: usize,
    device: Option<(String, (i32, i32))>,
    restarts: usize,
}

impl WorkerEvaluator {
    fn spawn(&mut self) -> Result<()> {
        let mut child = Command::new(std::env::current_exe()?).args(&self.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
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
        let hello = rx.recv_timeout(Duration::from_secs(600)).context("the autotune worker did not start")?;
        if let Reply::Hello { device, cc } = serde_json::from_str(&hello)? {
            self.device = Some((device, cc));
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
    fn evaluate(&mut self, source: &str, switches: &[(String, u32)]) -> Outcome {
        let req = Request { source: source.to_string(), switches: switches.to_vec(), repeats: self.repeats, held_out: self.held_out };
        match self.ask(&req) {
            Ok(Reply::Ran { penalty, ms }) => Outcome::Ran { penalty, ms },
            Ok(Reply::Illegal(why)) => Outcome::Illegal(why),
            Ok(Reply::CompileError(log)) => Outcome::CompileError(log),
            Ok(Reply::Failed(e)) | Err(e) => Outcome::Fault(e),
            Ok(Reply::Hello { .. }) => Outcome::Fault("unexpected hello".into()),
        }
    }

    /// Compiles a generation's variants in parallel into the PTX cache, where the worker's
    /// compile then finds them; failures are left for the worker to report.
    fn prepare(&mut self, variants: &[(String, Vec<(String, u32)>)]) {
        use rayon::prelude::*;
        let Some((_, cc)) = self.device else { return };
        let arch = crate::gpu::arch_for(cc);
        variants.par_iter().for_each(|(source, switches)| {
            if let Ok(sw) = switches_from(switches) {
                let _ = crate::gpu::compile_cached(source, &sw.defines(), arch);
            }
        });
    }
}

/// A kernel tuned for one GPU, as saved by autotune and loaded by aln.
#[derive(Serialize, Deserialize, Debug)]
pub struct Tuned {
    pub device: String,
    pub compute_capability: (i32, i32),
    pub switches: Vec<(String, u32)>,
    pub source: String,
    pub speedup: f64,
    pub genome: Genome,
}

fn tuned_path(device: &str, cc: (i32, i32)) -> PathBuf {
    let name: String = device.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    crate::gpu::cache_dir().join("tuned").join(format!("{name}-sm{}{}.json", cc.0, cc.1))
}

/// The tuned exact_match kernel saved for this GPU, if any.
pub fn load_tuned(device: &str, cc: (i32, i32)) -> Option<Tuned> {
    let text = std::fs::read_to_string(tuned_path(device, cc)).ok()?;
    serde_json::from_str(&text).ok()
}

pub fn run(args: AutotuneArgs) -> Result<()> {
    let budget = parse_budget(&args.budget)?;
    let index = crate::default_index::named_or_default("autotune", args.index.as_deref())?;
    index.announce("autotune", args.quiet);
    let g = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
    let specs = barracuda_switches();
    let worker_args: Vec<String> = vec![
        "autotune-worker".into(),
        "--index".into(),
        index.prefix.display().to_string(),
        "--reads".into(),
        args.reads.display().to_string(),
        "--batch-size".into(),
        args.batch_size.to_string(),
    ];
    let mut eval = WorkerEvaluator { args: worker_args, child: None, timeout: Duration::from_secs(args.variant_timeout), held_out: false, repeats: 5, device: None, restarts: 0 };
    eval.spawn()?;
    let (device, cc) = eval.device.clone().context("the worker did not name its GPU")?;
    // Timing noise: spread of the reference's times. The reference that variants are timed
    // against is the unmodified kernel with its loop and bounds guards (as every variant has
    // them); the worker's expected answers come from the plain kernel, and the guards must not
    // change them.
    let reference = Genome::reference(&specs);
    let ref_source = apply(&g, &reference.patches);
    let ref_defines = reference.assignments(&specs);
    let mut times = Vec::new();
    for _ in 0..5 {
        if let Outcome::Ran { ms, penalty } = eval.evaluate(&ref_source, &ref_defines) {
            if penalty != 0 {
                bail!("the guarded reference kernel answers differently from the plain kernel (penalty {penalty})");
            }
            times.push(ms);
        }
    }
    if times.is_empty() {
        bail!("the reference kernel does not run on {device}");
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let noise = ((times[times.len() - 1] - times[0]) / times[times.len() / 2]).max(0.01);
    if !args.quiet {
        eprintln!("[bcuda autotune] {device} (sm_{}{}): reference {:.4} ms, timing noise {:.1}%", cc.0, cc.1, times[times.len() / 2], 100.0 * noise);
    }
    let settings = Settings { population: args.pop, generations: args.gens, budget, seed: args.seed, noise };
    let mut evo = Evolution::new(&g, &specs, eval, settings);
    let quiet = args.quiet;
    let progress = crate::progress::Progress::new("generations", Some(args.gens as u64), quiet);
    let population = evo.run(&mut |generation, h| {
        if !quiet {
            let (best, median) = h.generations.last().copied().unwrap_or((None, None));
            crate::progress::note(&format!("[bcuda autotune] generation {generation}: {} evaluated, best {:?} ms, median {:?} ms", h.evaluated, best, median));
            progress.set_message(format!("{} variants evaluated", h.evaluated));
        }
        progress.advance(1, Some(generation as u64 + 1));
    });
    progress.finish();
    let best = population.first().map(|s| s.genome.clone()).unwrap_or_else(|| reference.clone());
    let winner = evo.minimise(&best);

    // Validation on held-out reads: same answers, speed-up over repeats.
    evo.evaluator.held_out = true;
    evo.evaluator.repeats = 11;
    let (src, defs) = evo.phenotype(&winner);
    let held_ref = evo.evaluator.evaluate(&ref_source, &ref_defines);
    let held_win = evo.evaluator.evaluate(&src, &defs);
    let (Outcome::Ran { ms: ref_ms, .. }, Outcome::Ran { penalty, ms: win_ms }) = (&held_ref, &held_win) else {
        bail!("validation on held-out reads failed: {held_ref:?} / {held_win:?}");
    };
    let speedup = ref_ms / win_ms;
    let history = evo.history.clone();
    let patches: Vec<String> = winner.patches.iter().map(|p| p.describe(&g)).collect();
    let summary = format!("{:?} with {} patches [{}]; held-out penalty {penalty}, speed-up {speedup:.3}x", defs, patches.len(), patches.join("; "));
    std::fs::create_dir_all(&args.report)?;
    std::fs::write(args.report.join("report.txt"), bcuda_autotune::report::text(&history, &summary) + &format!("worker restarts: {}\n", evo.evaluator.restarts))?;
    std::fs::write(args.report.join("progress.svg"), bcuda_autotune::report::svg(&history))?;
    if !args.quiet {
        eprintln!("[bcuda autotune] winner: {summary}; report in {}", args.report.display());
    }
    let tuned = Tuned { device: device.clone(), compute_capability: cc, switches: defs, source: src, speedup, genome: winner };
    std::fs::write(args.report.join("winner.json"), serde_json::to_string_pretty(&tuned)?)?;
    if *penalty != 0 || speedup <= 1.0 + noise {
        eprintln!("[bcuda autotune] no variant beat the reference on held-out reads by more than the noise; nothing saved");
        return Ok(());
    }
    let path = tuned_path(&device, cc);
    std::fs::create_dir_all(path.parent().unwrap())?;
    let tmp = crate::output::temp_path_for(&path);
    std::fs::write(&tmp, serde_json::to_string_pretty(&tuned)?)?;
    std::fs::rename(&tmp, &path)?;
    eprintln!("[bcuda autotune] saved for {device}: {}", path.display());
    Ok(())
}

/// Installs the tuned kernel for this GPU on `gpu`, when there is one; returns its speed-up.
pub fn use_tuned(gpu: &mut GpuAligner) -> Result<Option<f64>> {
    let Some(t) = load_tuned(&gpu.device_name, gpu.compute_capability) else { return Ok(None) };
    let sw = switches_from(&t.switches).map_err(|e| anyhow::anyhow!("tuned kernel: {e}"))?;
    gpu.set_exact_kernel(&t.source, sw)?;
    Ok(Some(t.speedup))
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
                genome = mutate(&genome, &specs, &g, &mut rng);
            }
            let Ok(sw) = switches_of(&genome, &specs) else {
                illegal += 1;
                continue;
            };
            let source = apply(&g, &genome.patches);
            crate::gpu::compile(&source, &sw.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{genome:?}\n{e}"));
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
            crate::gpu::compile(&source, &sw.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{:?}\n{e}", genome.assignments(&specs)));
            compiled += 1;
        }
        assert!(compiled >= 30, "{compiled}");
    }

    #[test]
    fn budgets_parse() {
        assert_eq!(parse_budget("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_budget("2d").is_err());
    }
}
