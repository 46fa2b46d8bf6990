//! An individual: the values of the kernel's tuning switches plus a list of patches; the
//! mutation and crossover operators, deterministic for a seeded generator.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::grammar::{Grammar, LineKind};
use crate::patch::{ForPart, Patch};
use crate::preprocess::active_lines;

/// One switch: its `-D` name, the values it may take (in order, for neighbour moves) and its
/// default. `None` in `values` means "not defined".
#[derive(Clone, Debug)]
pub struct SwitchSpec {
    pub name: &'static str,
    pub values: Vec<Option<u32>>,
    pub default: Option<u32>,
    /// Big and neighbour jumps (BLOCK_W, cache_threads) rather than a random other value.
    pub ordered: bool,
}

/// BarraCUDA's 15 switches and defaults.
pub fn barracuda_switches() -> Vec<SwitchSpec> {
    let flag = |name, default: bool| SwitchSpec {
        name,
        values: vec![Some(0), Some(1)],
        default: Some(default as u32),
        ordered: false,
    };
    vec![
        SwitchSpec {
            name: "BLOCK_W",
            values: (1..=16).map(|i| Some(32 * i)).collect(),
            default: Some(64),
            ordered: true,
        },
        SwitchSpec {
            name: "cache_threads",
            values: vec![None, Some(1), Some(2), Some(4), Some(8), Some(16), Some(32)],
            default: None,
            ordered: true,
        },
        flag("kl_par", false),
        flag("occ_par", false),
        flag("many_blocks", false),
        flag("direct_sequence", true),
        flag("direct_index", true),
        flag("sequence_global", true),
        flag("sequence_shift81", true),
        flag("sequence_stride", true),
        flag("mycache4", true),
        flag("mycache2", false),
        flag("direct_global_bwt", false),
        flag("cache_global_bwt", true),
        flag("scache_global_bwt", false),
    ]
}

/// The switches of the inexact kernels (`InexactSwitches` in src/gpu/switches.rs, which checks
/// that these names and domains are its own): `(name, values, default)`.
pub fn inexact_switches(domains: &[(&'static str, &[u32])], defaults: &[(&str, u32)]) -> Vec<SwitchSpec> {
    domains
        .iter()
        .map(|(name, values)| {
            let default = defaults.iter().find(|(n, _)| n == name).map(|d| d.1);
            SwitchSpec { name, values: values.iter().map(|&v| Some(v)).collect(), default, ordered: values.len() > 2 }
        })
        .collect()
}

/// The grammars that evolve: exact_match's, and the inexact kernels' when they evolve too.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    pub exact: &'a Grammar,
    pub inexact: Option<&'a Grammar>,
}

impl<'a> Sources<'a> {
    pub fn exact_only(exact: &'a Grammar) -> Self {
        Sources { exact, inexact: None }
    }
}

/// An individual: the switches of every kernel (one value per spec, exact_match's then the
/// inexact kernels'), and the patches of each kernel's source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Genome {
    /// One value per spec, in the specs' order.
    pub switches: Vec<Option<u32>>,
    /// Patches of exact_match.cu.
    pub patches: Vec<Patch>,
    /// Patches of inexact_match.cu.
    #[serde(default)]
    pub inexact_patches: Vec<Patch>,
}

impl Genome {
    /// Patches and switches moved from their defaults: the size that parsimony minimises.
    pub fn size(&self, specs: &[SwitchSpec]) -> usize {
        self.patches.len()
            + self.inexact_patches.len()
            + specs.iter().zip(&self.switches).filter(|(s, v)| s.default != **v).count()
    }

    pub fn reference(specs: &[SwitchSpec]) -> Genome {
        Genome { switches: specs.iter().map(|s| s.default).collect(), patches: Vec::new(), inexact_patches: Vec::new() }
    }

    /// `name=value` pairs (unset switches left out), for NVRTC defines and reports.
    pub fn assignments(&self, specs: &[SwitchSpec]) -> Vec<(String, u32)> {
        specs.iter().zip(&self.switches).filter_map(|(s, v)| v.map(|v| (s.name.to_string(), v))).collect()
    }
}

/// A random well-typed patch, or None when the draw was not valid (the caller draws again).
pub fn random_patch(g: &Grammar, rng: &mut StdRng) -> Option<Patch> {
    random_patch_within(g, &vec![true; g.lines.len()], rng)
}

/// A random well-typed patch whose lines are all `active` (compiled under the genome's
/// switches): a patch of a line that the preprocessor removes changes nothing, and would
/// only be refused by the phenotype tabu list.
pub fn random_patch_within(g: &Grammar, active: &[bool], rng: &mut StdRng) -> Option<Patch> {
    let editable: Vec<usize> = g.editable().filter(|&i| active[i]).collect();
    let of_kind = |pred: &dyn Fn(&LineKind) -> bool| -> Vec<usize> {
        editable.iter().copied().filter(|&i| pred(&g.lines[i].kind)).collect()
    };
    let statements = of_kind(&|k| matches!(k, LineKind::Statement));
    let ifs = of_kind(&|k| matches!(k, LineKind::If { .. }));
    let fors = of_kind(&|k| matches!(k, LineKind::For { .. }));
    let pick = |v: &[usize], rng: &mut StdRng| v.choose(rng).copied();
    let patch = match rng.random_range(0..9) {
        0 | 1 => Patch::Delete { line: pick(&statements, rng)? },
        2 | 3 => Patch::Replace { line: pick(&statements, rng)?, with: pick(&statements, rng)? },
        4 => Patch::Insert { before: pick(&editable, rng)?, from: pick(&statements, rng)? },
        5 => Patch::IfCond { line: pick(&ifs, rng)?, from: pick(&ifs, rng)? },
        6 => {
            let part = [ForPart::Init, ForPart::Cond, ForPart::Step][rng.random_range(0..3)].clone();
            Patch::ForPart { line: pick(&fors, rng)?, from: pick(&fors, rng)?, part }
        }
        7 => Patch::Unroll { line: pick(&fors, rng)?, count: rng.random_range(0..=11) },
        _ => {
            if rng.random_bool(0.5) {
                Patch::Restrict(rng.random_bool(0.5))
            } else {
                Patch::LaunchBounds(rng.random_range(0..=8))
            }
        }
    };
    (patch.valid(g) && !no_op(&patch, g)).then_some(patch)
}

/// Whether a patch leaves the source as it is (its phenotype would be refused as seen).
fn no_op(patch: &Patch, g: &Grammar) -> bool {
    let text = |i: usize| g.lines[i].text.trim();
    match patch {
        Patch::Replace { line, with } => text(*line) == text(*with),
        Patch::IfCond { line, from } => {
            matches!((&g.lines[*line].kind, &g.lines[*from].kind), (LineKind::If { cond: a }, LineKind::If { cond: b }) if a == b)
        }
        Patch::ForPart { line, from, part } => match (&g.lines[*line].kind, &g.lines[*from].kind) {
            (LineKind::For { init: i1, cond: c1, step: s1 }, LineKind::For { init: i2, cond: c2, step: s2 }) => {
                match part {
                    ForPart::Init => i1 == i2,
                    ForPart::Cond => c1 == c2,
                    ForPart::Step => s1 == s2,
                }
            }
            _ => true,
        },
        Patch::LaunchBounds(0) => true,
        _ => false,
    }
}

/// Mutation: a third of the time a switch, else a new patch (of either kernel, when both
/// evolve: the switches are few, so their single changes are soon all seen, while patches
/// are many). A switch is reset to its default one time in five; ordered switches step to a
/// neighbour or jump anywhere, others to another value. The child always differs from the
/// parent (a move that would change nothing moves elsewhere), so no draw is wasted on it.
pub fn mutate(genome: &Genome, specs: &[SwitchSpec], sources: Sources, rng: &mut StdRng) -> Genome {
    let mut child = genome.clone();
    if rng.random_bool(1.0 / 3.0) {
        let i = rng.random_range(0..specs.len());
        let spec = &specs[i];
        let current = child.switches[i];
        let others: Vec<Option<u32>> = spec.values.iter().copied().filter(|v| *v != current).collect();
        if let Some(&any) = others.choose(rng) {
            child.switches[i] = if rng.random_range(0..5) == 0 && spec.default != current {
                spec.default
            } else if spec.ordered && rng.random_bool(0.5) {
                let at = spec.values.iter().position(|v| *v == current).unwrap_or(0) as i64;
                let step = if rng.random_bool(0.5) { 1 } else { -1 };
                let to = (at + step).clamp(0, spec.values.len() as i64 - 1) as usize;
                if spec.values[to] == current {
                    any
                } else {
                    spec.values[to]
                }
            } else {
                any
            };
            return child;
        }
    }
    let (g, patches) = match sources.inexact {
        Some(inexact) if rng.random_bool(0.5) => (inexact, &mut child.inexact_patches),
        _ => (sources.exact, &mut child.patches),
    };
    let active = active_lines(g.lines.iter().map(|l| l.text.as_str()), &genome.assignments(specs));
    for _ in 0..32 {
        // A patch the genome already has would change nothing.
        if let Some(p) = random_patch_within(g, &active, rng).filter(|p| !patches.contains(p)) {
            patches.push(p);
            break;
        }
    }
    child
}

/// Crossover: uniform on switches, two-point on each kernel's patch list.
pub fn crossover(a: &Genome, b: &Genome, rng: &mut StdRng) -> Genome {
    let switches =
        a.switches.iter().zip(&b.switches).map(|(x, y)| if rng.random_bool(0.5) { *x } else { *y }).collect();
    let cut = |n: usize, rng: &mut StdRng| {
        let (mut i, mut j) = (rng.random_range(0..=n), rng.random_range(0..=n));
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        (i, j)
    };
    let mut two_point = |a: &[Patch], b: &[Patch]| -> Vec<Patch> {
        let (i, j) = cut(a.len(), rng);
        let (k, l) = cut(b.len(), rng);
        a[..i].iter().chain(&b[k..l]).chain(&a[j..]).cloned().collect()
    };
    let patches = two_point(&a.patches, &b.patches);
    let inexact_patches = two_point(&a.inexact_patches, &b.inexact_patches);
    Genome { switches, patches, inexact_patches }
}
