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

mod evaluator;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bcuda_autotune::evolution::{Evaluator, Outcome, Settings, Variant};
use bcuda_autotune::genome::{barracuda_switches, inexact_switches, Genome, Sources, SwitchSpec};
use bcuda_autotune::grammar::Grammar;
use bcuda_autotune::patch::apply;
use bcuda_autotune::{restarts, sizing};

use crate::gpu::tuned::{kernels_id, switches_from, KernelSwitches, Tuned};
use crate::gpu::InexactSwitches;
use evaluator::WorkerEvaluator;
pub use worker::{run_worker, WorkerArgs};

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

/// The reference kernels' timing: their median time, their spread (the timing noise) and the
/// wall-clock time of one evaluation.
struct Reference {
    median_ms: f64,
    noise: f64,
    run_s: f64,
}

/// Times the reference five times. The reference that variants are timed against is the
/// unmodified kernels with their loop and bounds guards (as every variant has them); the
/// worker's expected answers come from the plain kernels, and the guards must not change them.
fn time_reference(eval: &mut WorkerEvaluator, reference: &Variant, device: &str) -> Result<Reference> {
    let mut times = Vec::new();
    let t = std::time::Instant::now();
    for _ in 0..5 {
        match eval.evaluate(reference) {
            Outcome::Ran { ms, penalty: 0 } => times.push(ms),
            Outcome::Ran { penalty, .. } => {
                bail!("the guarded reference exact_match answers differently from the plain kernel (penalty {penalty})")
            }
            Outcome::WrongHits(why) => {
                bail!("the guarded reference inexact kernels answer differently from the plain kernels: {why}")
            }
            other => bail!("the reference kernels do not run on {device}: {other:?}"),
        }
    }
    let run_s = t.elapsed().as_secs_f64() / 5.0;
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let noise = ((times[times.len() - 1] - times[0]) / times[times.len() / 2]).max(0.01);
    Ok(Reference { median_ms: times[times.len() / 2], noise, run_s })
}

/// What a new variant costs: its compile (in parallel over a generation) and its evaluation
/// (loading, warm-up, timed runs), measured on one single mutant. Lowers the worker's timeout
/// to five times that: a variant that takes so long is hung or far too slow to win (at 1 Gbp
/// five restarts at 60 s, each followed by the new worker's start, took most of an 8-minute
/// budget).
fn cost_per_variant(eval: &mut WorkerEvaluator, reference: &Variant, specs: &[SwitchSpec], run_s: f64) -> Duration {
    let mut probe = Genome::reference(specs);
    let last = specs.len() - 1;
    probe.switches[last] = specs[last].values.iter().copied().find(|v| *v != specs[last].default).flatten();
    let probe = Variant { switches: probe.assignments(specs), ..reference.clone() };
    let t = std::time::Instant::now();
    eval.prepare(std::slice::from_ref(&probe));
    let compile_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    eval.evaluate(&probe);
    let probe_s = t.elapsed().as_secs_f64();
    eval.timeout = eval.timeout.min(Duration::from_secs_f64((5.0 * probe_s.max(run_s)).max(20.0)));
    Duration::from_secs_f64(compile_s / rayon::current_num_threads() as f64 + probe_s.max(run_s))
}

/// The worker's command line: the index, the reads (standard input copied to a file, which
/// the worker reads by name) and the batch size.
fn worker_command(args: &AutotuneArgs, index: &std::path::Path, reads: &std::path::Path) -> Vec<String> {
    vec![
        "autotune-worker".into(),
        "--index".into(),
        index.display().to_string(),
        "--reads".into(),
        reads.display().to_string(),
        "--batch-size".into(),
        args.batch_size.to_string(),
    ]
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
    let spooled = crate::input::is_stdin(&args.reads).then(crate::input::spool_stdin_named).transpose()?;
    let reads = spooled.as_ref().map_or(args.reads.clone(), |f| f.path().to_path_buf());
    let mut eval =
        WorkerEvaluator::new(worker_command(&args, &index.prefix, &reads), Duration::from_secs(args.variant_timeout));
    eval.spawn()?;
    let (device, cc) = eval.device.clone().context("the worker did not name its GPU")?;
    let reference = Genome::reference(&specs);
    let ref_variant = Variant {
        exact: apply(&g, &[]),
        inexact: sources.inexact.map(|ig| apply(ig, &[])),
        switches: reference.assignments(&specs),
    };
    let timing = time_reference(&mut eval, &ref_variant, &device)?;
    let per_variant = cost_per_variant(&mut eval, &ref_variant, &specs, timing.run_s);
    let mut plan = sizing::plan(budget.saturating_sub(started.elapsed()), per_variant, args.restarts);
    plan.population = args.pop.unwrap_or(plan.population);
    plan.generations = args.gens.unwrap_or(plan.generations);
    if !args.quiet {
        eprintln!(
            "[bcuda autotune] {device} (sm_{}{}): reference {:.4} ms (GPU time of {}; pass 1 {}), timing noise {:.1}%, about {:.2} s per variant (killed after {:.0} s): {} restarts of {} generations of {}",
            cc.0,
            cc.1,
            timing.median_ms,
            if args.exact_only { "exact_match" } else { "all GPU passes" },
            if eval.first_pass_gives_up == Some(true) { "given up, as aln's rule does on these reads" } else { "searching, as in aln on these reads" },
            100.0 * timing.noise,
            per_variant.as_secs_f64(),
            eval.timeout.as_secs_f64(),
            plan.restarts,
            plan.generations,
            plan.population
        );
    }
    let settings = Settings {
        population: plan.population,
        generations: plan.generations,
        budget: plan.per_restart,
        seed: args.seed,
        noise: timing.noise,
    };
    let runs = evolve(sources, &specs, &mut eval, &settings, &plan, budget, started, args.quiet);
    let describe = |w: &Genome| -> Vec<String> {
        let mut d: Vec<String> = w.patches.iter().map(|p| format!("exact_match: {}", p.describe(&g))).collect();
        d.extend(w.inexact_patches.iter().map(|p| format!("inexact: {}", p.describe(&inexact_g))));
        d
    };
    let winner = restarts::best(&runs).and_then(|r| r.winner.clone()).unwrap_or_else(|| reference.clone());
    let phenotype = shipped_variant(sources, &specs, &winner);
    let defaults = shipped_variant(sources, &specs, &reference);
    if phenotype == defaults {
        write_report(&args.report, &runs, &specs, &describe, "the defaults (no variant beat them)", eval.restarts)?;
        eprintln!("[bcuda autotune] the default kernels are this GPU's fastest found; nothing saved");
        return Ok(());
    }

    // Validation on held-out reads against what aln runs untuned: same answers (intervals and
    // hits), speed-up over repeats.
    eval.held_out = true;
    eval.repeats = 11;
    let held_ref = eval.evaluate(&defaults);
    let held_win = eval.evaluate(&phenotype);
    let (Outcome::Ran { ms: ref_ms, .. }, Outcome::Ran { penalty, ms: win_ms }) = (&held_ref, &held_win) else {
        bail!("validation on held-out reads failed: {held_ref:?} / {held_win:?}");
    };
    let speedup = ref_ms / win_ms;
    let changes = describe(&winner);
    let summary = format!(
        "{:?} with {} patches [{}]; held-out penalty {penalty}, hits identical, speed-up {speedup:.3}x",
        phenotype.switches,
        changes.len(),
        changes.join("; ")
    );
    write_report(&args.report, &runs, &specs, &describe, &summary, eval.restarts)?;
    if !args.quiet {
        eprintln!("[bcuda autotune] winner: {summary}; report in {}", args.report.display());
    }
    let tuned = Tuned {
        device: device.clone(),
        compute_capability: cc,
        switches: phenotype.switches.clone(),
        source: phenotype.exact.clone(),
        inexact_source: phenotype.inexact.clone(),
        speedup,
        genome: winner,
        kernels: kernels_id(),
    };
    write_whole(&args.report.join("winner.json"), serde_json::to_string_pretty(&tuned)?.as_bytes())?;
    if *penalty != 0 || speedup <= 1.0 + timing.noise {
        eprintln!(
            "[bcuda autotune] no variant beat the reference on held-out reads by more than the noise; nothing saved"
        );
        return Ok(());
    }
    let path = tuned.save()?;
    eprintln!("[bcuda autotune] saved for {device}: {}", path.display());
    Ok(())
}

/// The kernels `aln` runs for `genome`: a kernel without patches is its plain source, as aln
/// runs it untuned (the bounds guards only keep patched code in its arrays, and cost time: the
/// guarded inexact kernels' pass 2 took 1.24x as long on an H200), a patched one the guarded
/// phenotype the evolution timed.
fn shipped_variant(sources: Sources, specs: &[SwitchSpec], genome: &Genome) -> Variant {
    let mut variant = bcuda_autotune::evolution::phenotype(sources, specs, genome);
    if genome.patches.is_empty() {
        variant.exact = crate::gpu::EXACT_MATCH_CU.to_string();
    }
    if genome.inexact_patches.is_empty() {
        if let Some(inexact) = variant.inexact.as_mut() {
            *inexact = crate::gpu::INEXACT_MATCH_CU.to_string();
        }
    }
    variant
}

/// The restarts of the evolution, with a line of progress per generation.
#[allow(clippy::too_many_arguments)] // the evolution's inputs, each used once; a struct would only rename them
fn evolve(
    sources: Sources,
    specs: &[SwitchSpec],
    eval: &mut WorkerEvaluator,
    settings: &Settings,
    plan: &sizing::Plan,
    budget: Duration,
    started: std::time::Instant,
    quiet: bool,
) -> Vec<restarts::Restart> {
    let progress =
        crate::progress::Progress::new("generations", Some((plan.generations * plan.restarts) as u64), quiet);
    let mut done = 0u64;
    // When the current restart began (its history counts its own evaluations).
    let mut restart_start = (0, std::time::Instant::now());
    let runs = restarts::run(
        sources,
        specs,
        eval,
        settings,
        plan.restarts,
        plan.per_restart,
        &mut |restart, generation, h| {
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
        },
    );
    progress.finish();
    runs
}

/// Writes `bytes` to `path` whole or not at all.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut out = bcuda_output::Output::file(path)?;
    out.write_all(bytes)?;
    Ok(out.commit()?)
}

/// The report folder: report.txt (each restart's history and winner, the changes the winners
/// share, the final winner) and progress.svg (the best restart's history).
fn write_report(
    dir: &std::path::Path,
    runs: &[restarts::Restart],
    specs: &[SwitchSpec],
    describe: &dyn Fn(&Genome) -> Vec<String>,
    summary: &str,
    worker_restarts: usize,
) -> Result<()> {
    let winners: Vec<&Genome> = runs.iter().filter_map(|r| r.winner.as_ref()).collect();
    let shared = restarts::recurring(&winners, specs, describe);
    std::fs::create_dir_all(dir)?;
    let mut text = String::new();
    for (r, run) in runs.iter().enumerate() {
        text += &format!("== restart {} (seed {})\n", r + 1, run.seed);
        let w = run.winner.as_ref().map_or("none beat the reference".to_string(), |w| {
            format!("{:?} [{}]", w.assignments(specs), describe(w).join("; "))
        });
        text += &bcuda_autotune::report::text(&run.history, &w);
    }
    text += "== changes of the restarts' winners (how many winners have each)\n";
    for (change, n) in &shared {
        text += &format!("{n}\t{change}\n");
    }
    text += &format!("== final winner (fastest restart's, validated)\n{summary}\nworker restarts: {worker_restarts}\n");
    write_whole(&dir.join("report.txt"), text.as_bytes())?;
    if let Some(run) = restarts::best(runs).or(runs.first()) {
        write_whole(&dir.join("progress.svg"), bcuda_autotune::report::svg(&run.history).as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Switches;
    use bcuda_autotune::genome::mutate;
    use rand::SeedableRng;

    /// aln runs the plain source of a kernel the winner did not patch, and the guarded one it
    /// did: the defaults are the plain kernels, and a switch alone changes no source.
    #[test]
    fn shipped_variant_guards_only_patched_kernels() {
        let (g, ig) = (Grammar::parse(crate::gpu::EXACT_MATCH_CU), Grammar::parse(crate::gpu::INEXACT_MATCH_CU));
        let sources = Sources { exact: &g, inexact: Some(&ig) };
        let specs = all_switches(false);
        let reference = Genome::reference(&specs);
        let defaults = shipped_variant(sources, &specs, &reference);
        assert_eq!(defaults.exact, crate::gpu::EXACT_MATCH_CU);
        assert_eq!(defaults.inexact.as_deref(), Some(crate::gpu::INEXACT_MATCH_CU));

        let mut switched = reference.clone();
        let last = specs.len() - 1;
        switched.switches[last] = specs[last].values.iter().copied().find(|&v| v != reference.switches[last]).unwrap();
        let v = shipped_variant(sources, &specs, &switched);
        assert_eq!((v.exact.as_str(), v.inexact.as_deref()), (defaults.exact.as_str(), defaults.inexact.as_deref()));
        assert_ne!(v, defaults, "a switch moved");

        let line =
            ig.lines.iter().position(|l| matches!(l.kind, bcuda_autotune::grammar::LineKind::For { .. })).unwrap();
        let mut patched = reference.clone();
        patched.inexact_patches.push(bcuda_autotune::patch::Patch::Unroll { line, count: 2 });
        assert!(patched.inexact_patches[0].valid(&ig));
        let v = shipped_variant(sources, &specs, &patched);
        assert_eq!(v.exact, crate::gpu::EXACT_MATCH_CU);
        assert!(v.inexact.unwrap().contains("gi_clamp("), "a patched kernel keeps its guards");
    }

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
            crate::gpu::compile(&source, &sw.exact.defines(), Some("sm_90"))
                .unwrap_or_else(|e| panic!("{genome:?}\n{e}"));
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
            assert_eq!(
                bcuda_autotune::bounds::bwt_words(seq_len),
                bcuda_index::bwt::interleaved_words(seq_len),
                "{seq_len}"
            );
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

    /// Switches by name go to their kernel; the inexact kernels' defaults are the driver's.
    #[test]
    fn switches_split_between_the_kernels() {
        let specs = all_switches(false);
        assert_eq!(specs.len(), 15 + InexactSwitches::DOMAINS.len());
        assert_eq!(
            switches_of(&Genome::reference(&specs), &specs).unwrap(),
            KernelSwitches {
                exact: Switches { cache_threads: None, ..Switches::default() },
                inexact: InexactSwitches::default()
            }
        );
        let sw = switches_from(&[
            ("BLOCK_W".into(), 128),
            ("INEXACT_BLOCK_W".into(), 256),
            ("occ_ldg".into(), 1),
            ("first_max_pops".into(), 4096),
        ])
        .unwrap();
        assert_eq!(
            (sw.exact.block_w, sw.inexact.block_w, sw.inexact.occ_ldg, sw.inexact.first_max_pops),
            (128, 256, true, 4096)
        );
        assert!(switches_from(&[("INEXACT_BLOCK_W".into(), 100)]).is_err());
        assert_eq!(all_switches(true).len(), 15);
    }

    #[test]
    fn budgets_parse() {
        assert_eq!(parse_budget("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("2h").unwrap(), Duration::from_secs(7200));
        assert!(parse_budget("2d").is_err());
    }
}
