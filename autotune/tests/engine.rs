//! The GI engine on the real kernel sources: grammar, patches, operators, tabu, selection.

use std::collections::HashSet;
use std::time::Duration;

use bcuda_autotune::evolution::{Evaluator, Evolution, Outcome, Settings};
use bcuda_autotune::genome::{barracuda_switches, crossover, mutate, random_patch, Genome};
use bcuda_autotune::grammar::{Grammar, LineKind};
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
    assert_eq!(g.lines[f].kind, LineKind::For { init: "int j = 0".into(), cond: "j < r.len".into(), step: "++j".into() });
    // Preprocessor lines and signatures are never edited.
    assert!(g.lines.iter().filter(|l| l.text.trim_start().starts_with('#')).all(|l| l.kind == LineKind::Fixed));
    // Scope: `e` exists only after `Entry e = stack_pop(st);`.
    let pop = line_of(&g, "Entry e = stack_pop(st);");
    let uses_e = line_of(&g, "if (ends_before(h, entry_score(e), opt)) break;");
    let before_pop = line_of(&g, "if (++st.pops > st.max_pops) return STACK_FULL;");
    assert!(g.fits(uses_e, pop + 1));
    assert!(!g.fits(uses_e, before_pop));
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
            a = mutate(&a, &specs, &g, &mut rng);
            b = mutate(&b, &specs, &g, &mut rng);
        }
        (a.clone(), b.clone(), crossover(&a, &b, &mut rng))
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
    let mut rng = StdRng::seed_from_u64(1);
    let patches: Vec<Patch> = (0..500).filter_map(|_| random_patch(&g, &mut rng)).collect();
    assert!(patches.len() > 100 && patches.iter().all(|p| p.valid(&g)));
}

/// A stand-in for the GPU: BLOCK_W=256 is faster; deleting the line that flags an N breaks the
/// answers; other patches cost a little time. Records every phenotype it sees.
struct FakeGpu {
    seen: HashSet<String>,
    calls: usize,
}

impl Evaluator for FakeGpu {
    fn evaluate(&mut self, source: &str, switches: &[(String, u32)]) -> Outcome {
        self.calls += 1;
        let key = preprocess(source, switches) + &format!("{switches:?}");
        self.seen.insert(key);
        if !source.contains("has_n = true;") {
            return Outcome::Ran { penalty: 300, ms: 0.5 };
        }
        let block_w = switches.iter().find(|(n, _)| n == "BLOCK_W").map_or(64, |s| s.1);
        let ms = if block_w == 256 { 1.0 } else { 2.0 } + source.matches("#pragma unroll").count() as f64 * 0.01;
        Outcome::Ran { penalty: 0, ms }
    }
}

#[test]
fn evolution_selects_correct_faster_variants_without_repeats() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let specs = barracuda_switches();
    let settings = Settings { population: 40, generations: 6, budget: Duration::from_secs(60), seed: 3, noise: 0.02 };
    let mut evo = Evolution::new(&g, &specs, FakeGpu { seen: HashSet::new(), calls: 0 }, settings);
    let population = evo.run(&mut |_, _| {});
    assert_eq!(evo.evaluator.seen.len(), evo.evaluator.calls, "a phenotype was evaluated twice");
    let best = &population[0];
    assert_eq!(best.outcome, Outcome::Ran { penalty: 0, ms: 1.0 }, "{:?}", best.genome);
    let minimal = evo.minimise(&best.genome);
    assert!(minimal.patches.is_empty(), "useless patches kept: {:?}", minimal.patches);
    let assignments = minimal.assignments(&specs);
    assert!(assignments.contains(&("BLOCK_W".to_string(), 256)));
    assert_eq!(assignments.iter().filter(|(n, v)| n != "BLOCK_W" && specs.iter().find(|s| s.name == n).unwrap().default != Some(*v)).count(), 0);
    assert_eq!(evo.history.reference_ms, 2.0);
}

#[test]
fn patches_describe_the_lines_they_touch() {
    let g = Grammar::parse(&source("exact_match.cu"));
    let for_line = g.lines.iter().position(|l| matches!(l.kind, LineKind::For { .. })).expect("a for loop");
    let text = g.lines[for_line].text.trim().to_string();
    assert_eq!(Patch::Unroll { line: for_line, count: 2 }.describe(&g), format!("#pragma unroll 2 before line {} `{text}`", for_line + 1));
    assert_eq!(Patch::Delete { line: for_line }.describe(&g), format!("delete line {} `{text}`", for_line + 1));
    assert_eq!(Patch::LaunchBounds(4).describe(&g), "__launch_bounds__(BLOCK_W, 4)");
}
