//! The GI engine on the real kernel sources: grammar, patches, operators, tabu, selection.

use std::collections::HashSet;
use std::time::Duration;

use bcuda_autotune::evolution::{Evaluator, Evolution, Outcome, Settings, Variant};
use bcuda_autotune::genome::{
    barracuda_switches, crossover, inexact_switches, mutate, random_patch, Genome, Sources, SwitchSpec,
};
use bcuda_autotune::grammar::{Grammar, LineKind, UNTOUCHABLE};
use bcuda_autotune::patch::{apply, Patch, LOOP_GUARD};
use bcuda_autotune::preprocess::preprocess;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn source(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuda").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn line_of(g: &Grammar, needle: &str) -> usize {
    g.lines.iter().position(|l| l.text.contains(needle)).unwrap_or_else(|| panic!("no line with {needle}"))
}

#[test]
fn grammar_types_the_kernel_lines() {
    let g = Grammar::parse(&source("inexact_match.cu"));
    let count = |f: &dyn Fn(&LineKind) -> bool| g.lines.iter().filter(|l| f(&l.kind)).count();
    assert!(count(&|k| matches!(k, LineKind::Statement)) > 50);
    assert!(count(&|k| matches!(k, LineKind::If { .. })) > 20);
    assert!(count(&|k| matches!(k, LineKind::For { .. })) >= 8);
    assert!(count(&|k| matches!(k, LineKind::Else)) >= 2, "else branches");
    let f = line_of(&g, "for (int j = 0; j < r.len; ++j) n_amb");
    assert_eq!(
        g.lines[f].kind,
        LineKind::For { init: "int j = 0".into(), cond: "j < r.len".into(), step: "++j".into() }
    );
    // Preprocessor lines and signatures are never edited.
    assert!(g.lines.iter().filter(|l| l.text.trim_start().starts_with('#')).all(|l| l.kind == LineKind::Fixed));
    // Scope: search_pop's `next` exists only after its declaration, `int next = step<...>(...);`.
    let uses_next = line_of(&g, "if (next == STEP_HIT) {");
    let declared = (0..uses_next)
        .rev()
        .find(|&i| g.lines[i].text.trim().starts_with("int next = step<"))
        .expect("search_pop declares next");
    let before = line_of(&g, "bool has_matching;");
    assert!(before < declared && g.fits(uses_next, declared + 1));
    assert!(!g.fits(uses_next, before));
    // A parameter is visible only in its own function: extend_exact's `l0 = l;` uses its
    // parameter l0, which cal_width (with k and l of its own) does not have.
    let l0 = line_of(&g, "l0 = l;");
    let in_cal_width = line_of(&g, "cells[n] = pack_width(0, bid + 1);");
    assert!(g.fits(l0, l0) && !g.fits(l0, in_cal_width));
    // A local of an if block is out of scope in its `} else if (...)`: search_pop's `after`.
    let uses_after = line_of(&g, "if (after == HIT_STOP) return h.n_aln;");
    let else_if = line_of(&g, "} else if (next == STEP_EXPANDED && has_matching) {");
    assert!(g.fits(uses_after, uses_after) && !g.fits(uses_after, else_if));
    // A declaration of one of the source's own structs is a declaration (never deleted,
    // replaced or copied): `Search s;` copied over an earlier line used a type not yet defined
    // and declared `s` twice.
    let search_s = line_of(&g, "Search s;");
    assert!(g.lines[search_s].declares.contains("s"));
    assert!(!Patch::Replace { line: line_of(&g, "k0 = k;"), with: search_s }.valid(&g));
    assert!(!Patch::Delete { line: search_s }.valid(&g));
}

#[test]
fn patches_apply_and_loops_keep_their_guard() {
    let src = source("exact_match.cu");
    let g = Grammar::parse(&src);
    let plain = apply(&g, &[]);
    let n_loops = g.lines.iter().filter(|l| matches!(l.kind, LineKind::For { .. })).count();
    assert_eq!(plain.matches(&format!("< {LOOP_GUARD}u")).count(), n_loops);
    let del = line_of(&g, "has_n = true;");
    let out = apply(&g, &[Patch::Delete { line: del }]);
    assert_eq!(out.matches("has_n = true;").count(), plain.matches("has_n = true;").count() - 1);
    let lp = g.lines.iter().position(|l| matches!(l.kind, LineKind::For { .. })).unwrap();
    let out = apply(&g, &[Patch::Unroll { line: lp, count: 4 }, Patch::Restrict(false), Patch::LaunchBounds(2)]);
    assert!(out.contains("#pragma unroll 4"));
    assert!(out.contains("__launch_bounds__(BLOCK_W, 2)"));
    let sig: String = out.lines().skip_while(|l| !l.contains("__global__")).take(4).collect();
    assert!(!sig.contains("__restrict__"));
    let out = apply(&g, &[Patch::Restrict(true)]);
    let sig: String = out.lines().skip_while(|l| !l.contains("__global__")).take(4).collect();
    assert_eq!(sig.matches('*').count(), sig.matches("__restrict__").count());
    // A declaration cannot be deleted: later lines need it.
    let decl = line_of(&g, "u64 k = 0, l = seq_len;");
    assert!(!Patch::Delete { line: decl }.valid(&g));
}

#[test]
fn operators_are_deterministic_for_a_seed() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let specs = barracuda_switches();
    let run = |seed| {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut a = Genome::reference(&specs);
        let mut b = Genome::reference(&specs);
        for _ in 0..20 {
            a = mutate(&a, &specs, Sources::exact_only(&g), &mut rng);
            b = mutate(&b, &specs, Sources::exact_only(&g), &mut rng);
        }
        (a.clone(), b.clone(), crossover(&a, &b, &mut rng))
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
    let mut rng = StdRng::seed_from_u64(1);
    let patches: Vec<Patch> = (0..500).filter_map(|_| random_patch(&g, &mut rng)).collect();
    assert!(patches.len() > 100 && patches.iter().all(|p| p.valid(&g)));
}

/// A stand-in for the GPU: BLOCK_W of 256 or more is faster; deleting the line that flags an N breaks the
/// answers; other patches cost a little time. Records every phenotype it sees but the
/// reference's (timed again each generation), and the generations it was told of.
struct FakeGpu {
    seen: HashSet<String>,
    calls: usize,
    reference: String,
    generations: Vec<usize>,
}

impl FakeGpu {
    fn new(g: &Grammar) -> FakeGpu {
        FakeGpu { seen: HashSet::new(), calls: 0, reference: apply(g, &[]), generations: Vec::new() }
    }
}

impl Evaluator for FakeGpu {
    fn evaluate(&mut self, v: &Variant) -> Outcome {
        let source = &v.exact;
        let switches = &v.switches;
        let block_w = switches.iter().find(|(n, _)| n == "BLOCK_W").map_or(64, |s| s.1);
        let is_reference = *source == self.reference && v.inexact.is_none() && block_w == 64;
        if !(is_reference && switches == &Genome::reference(&barracuda_switches()).assignments(&barracuda_switches())) {
            self.calls += 1;
            self.seen.insert(preprocess(source, switches) + &format!("{switches:?}"));
        }
        if !source.contains("has_n = true;") {
            return Outcome::Ran { penalty: 300, ms: 0.5 };
        }
        let ms = if block_w >= 256 { 1.0 } else { 2.0 } + source.matches("#pragma unroll").count() as f64 * 0.01;
        Outcome::Ran { penalty: 0, ms }
    }

    fn begin_generation(&mut self, generation: usize) {
        self.generations.push(generation);
    }
}

fn settings(population: usize, generations: usize, seed: u64) -> Settings {
    Settings { population, generations, budget: Duration::from_secs(60), seed, noise: 0.02 }
}

#[test]
fn evolution_selects_correct_faster_variants_without_repeats() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let specs = barracuda_switches();
    let mut evo = Evolution::new(Sources::exact_only(&g), &specs, FakeGpu::new(&g), settings(40, 6, 3));
    let population = evo.run(&mut |_, _| {});
    assert_eq!(evo.evaluator.seen.len(), evo.evaluator.calls, "a phenotype was evaluated twice");
    // Every evolved variant's outcome is counted once (the reference is not one of them).
    let o = &evo.history.outcomes;
    assert_eq!(
        o.ran + o.penalised + o.wrong_hits + o.compile_errors + o.illegal + o.faults,
        evo.history.evaluated - 1,
        "{o:?}"
    );
    assert!(o.ran > 0 && o.faults == 0, "{o:?}");
    let best = &population[0];
    assert!(matches!(best.outcome, Outcome::Ran { penalty: 0, ms } if ms <= 1.02), "{:?}", best);
    // Parsimony: within the noise of the best, none has fewer changes than the first.
    let within: Vec<_> =
        population.iter().filter(|s| s.relative.is_some_and(|r| r <= best.relative.unwrap() + 0.02)).collect();
    assert!(within.iter().all(|s| s.genome.size(&specs) >= best.genome.size(&specs)
        || (s.relative.unwrap() / 0.02).floor() > (best.relative.unwrap() / 0.02).floor()));
    let minimal = evo.minimise(&best.genome);
    assert!(minimal.patches.is_empty(), "useless patches kept: {:?}", minimal.patches);
    let assignments = minimal.assignments(&specs);
    assert!(assignments.iter().any(|(n, v)| n == "BLOCK_W" && *v >= 256), "{assignments:?}");
    assert_eq!(
        assignments
            .iter()
            .filter(|(n, v)| n != "BLOCK_W" && specs.iter().find(|s| s.name == n).unwrap().default != Some(*v))
            .count(),
        0
    );
    assert_eq!(evo.history.reference_ms, 2.0);
    // A fresh subset of reads for the initial population and each generation.
    assert_eq!(evo.evaluator.generations, (0..=6).collect::<Vec<_>>());
}

/// The search spends its draws on new variants: over ten generations few drawn genomes
/// are ones seen before, and no mutation returns its parent.
#[test]
fn few_draws_hit_the_tabu_list() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let specs = barracuda_switches();
    let mut evo = Evolution::new(Sources::exact_only(&g), &specs, FakeGpu::new(&g), settings(40, 10, 5));
    let mut progress_rates = Vec::new();
    evo.run(&mut |_, h| progress_rates.push(h.tabu_rate()));
    assert_eq!(progress_rates.len(), 10);
    let h = &evo.history;
    assert!(h.evaluated > 200, "{h:?}");
    assert!(
        h.tabu_rate() < 0.1,
        "tabu-hit rate {:.3} ({} hits, {} of phenotypes, {} evaluated, {} redraws)",
        h.tabu_rate(),
        h.tabu_hits,
        h.phenotype_hits,
        h.evaluated,
        h.redraws
    );
    let mut rng = StdRng::seed_from_u64(2);
    let reference = Genome::reference(&specs);
    for _ in 0..500 {
        assert_ne!(mutate(&reference, &specs, Sources::exact_only(&g), &mut rng), reference);
    }
}

/// Both kernels evolve: mutation reaches the inexact kernels' switches and source, the
/// phenotype carries both sources, and synchronisation, atomics and `// guard` lines are
/// never edited nor copied.
#[test]
fn the_inexact_kernels_evolve_beside_exact_match() {
    let exact = Grammar::parse(&source("exact_match.cu"));
    let inexact_src = source("inexact_match.cu");
    let inexact = Grammar::parse(&inexact_src);
    let untouchable: Vec<usize> = inexact
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| UNTOUCHABLE.iter().any(|u| l.text.contains(u)))
        .map(|(i, _)| i)
        .collect();
    assert!(untouchable.len() >= 15, "{untouchable:?}");
    assert!(untouchable.iter().all(|&i| inexact.lines[i].kind == LineKind::Fixed));
    let domains: &[(&'static str, &[u32])] = &[("INEXACT_BLOCK_W", &[64, 128, 256]), ("occ_ldg", &[0, 1])];
    let mut specs: Vec<SwitchSpec> = barracuda_switches();
    specs.extend(inexact_switches(domains, &[("INEXACT_BLOCK_W", 64), ("occ_ldg", 0)]));
    let sources = Sources { exact: &exact, inexact: Some(&inexact) };
    let mut rng = StdRng::seed_from_u64(9);
    let mut genome = Genome::reference(&specs);
    let (mut inexact_switch_moves, mut touched) = (0, HashSet::new());
    for _ in 0..400 {
        let child = mutate(&genome, &specs, sources, &mut rng);
        inexact_switch_moves += (child.switches[15..] != genome.switches[15..]) as usize;
        genome = child;
        if genome.inexact_patches.len() > 30 {
            genome.inexact_patches.clear();
        }
        for p in &genome.inexact_patches {
            assert!(p.valid(&inexact));
            touched.insert(format!("{p:?}"));
            let text = p.describe(&inexact);
            assert!(!UNTOUCHABLE.iter().any(|u| text.contains(u)), "{text}");
        }
    }
    assert!(inexact_switch_moves > 5 && touched.len() > 20, "{inexact_switch_moves} {}", touched.len());
    let evo = Evolution::new(sources, &specs, FakeGpu::new(&exact), settings(4, 1, 1));
    let v = evo.phenotype(&genome);
    assert!(v.inexact.as_deref().is_some_and(|s| s.contains("inexact_level")));
    assert!(v.switches.iter().any(|(n, _)| n == "INEXACT_BLOCK_W"));
    // The unpatched inexact source is the kernel with its guards; its launch bounds can change.
    let plain = apply(&inexact, &[]);
    assert!(plain.contains("__syncthreads") && plain.contains("gi_clamp("));
    assert!(apply(&inexact, &[Patch::LaunchBounds(2)]).contains("__launch_bounds__(INEXACT_BLOCK_W, 2)"));
}

/// Restarts: independent runs (their own seeds and tabu lists) on one evaluator, each
/// winner minimised; the changes their winners share are counted.
#[test]
fn restarts_run_within_the_budget_and_their_winners_are_compared() {
    use bcuda_autotune::restarts;
    let g = Grammar::parse(&source("exact_match.cu"));
    let specs = barracuda_switches();
    let mut gpu = FakeGpu::new(&g);
    let mut seen_restarts = HashSet::new();
    let runs = restarts::run(
        Sources::exact_only(&g),
        &specs,
        &mut gpu,
        &settings(30, 8, 11),
        3,
        Duration::from_secs(20),
        &mut |r, _, _| {
            seen_restarts.insert(r);
        },
    );
    assert_eq!(runs.len(), 3);
    assert_eq!(seen_restarts.len(), 3);
    assert_eq!(runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [11, 12, 13]);
    let winners: Vec<&Genome> = runs.iter().filter_map(|r| r.winner.as_ref()).collect();
    assert!(winners.len() >= 2, "{runs:?}");
    let shared = restarts::recurring(&winners, &specs, &|w| w.patches.iter().map(|p| p.describe(&g)).collect());
    assert!(shared[0].0.starts_with("BLOCK_W="), "{shared:?}");
    let block_w_changed = shared.iter().filter(|(c, _)| c.starts_with("BLOCK_W=")).map(|(_, n)| n).sum::<usize>();
    assert_eq!(block_w_changed, winners.len(), "{shared:?}");
    assert_eq!(restarts::best(&runs).unwrap().relative, Some(0.5));
    // Each restart draws its own variants: its evaluations are not bounded by the others'.
    assert!(runs.iter().all(|r| r.history.evaluated > 20), "{runs:?}");
}

#[test]
fn patches_describe_the_lines_they_touch() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let for_line = g.lines.iter().position(|l| matches!(l.kind, LineKind::For { .. })).expect("a for loop");
    let text = g.lines[for_line].text.trim().to_string();
    assert_eq!(
        Patch::Unroll { line: for_line, count: 2 }.describe(&g),
        format!("#pragma unroll 2 before line {} `{text}`", for_line + 1)
    );
    assert_eq!(Patch::Delete { line: for_line }.describe(&g), format!("delete line {} `{text}`", for_line + 1));
    assert_eq!(Patch::LaunchBounds(4).describe(&g), "__launch_bounds__(BLOCK_W, 4)");
}
