//! An individual: the values of the kernel's tuning switches plus a list of patches; the
//! mutation and crossover operators, deterministic for a seeded generator.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::grammar::{Grammar, LineKind};
use crate::patch::{ForPart, Patch};

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
    let flag = |name, default: bool| SwitchSpec { name, values: vec![Some(0), Some(1)], default: Some(default as u32), ordered: false };
    vec![
        SwitchSpec { name: "BLOCK_W", values: (1..=16).map(|i| Some(32 * i)).collect(), default: Some(64), ordered: true },
        SwitchSpec { name: "cache_threads", values: vec![None, Some(1), Some(2), Some(4), Some(8), Some(16), Some(32)], default: None, ordered: true },
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

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Genome {
    /// One value per spec, in the specs' order.
    pub switches: Vec<Option<u32>>,
    pub patches: Vec<Patch>,
}

impl Genome {
    pub fn reference(specs: &[SwitchSpec]) -> Genome {
        Genome { switches: specs.iter().map(|s| s.default).collect(), patches: Vec::new() }
    }

    /// `name=value` pairs (unset switches left out), for NVRTC defines and reports.
    pub fn assignments(&self, specs: &[SwitchSpec]) -> Vec<(String, u32)> {
        specs.iter().zip(&self.switches).filter_map(|(s, v)| v.map(|v| (s.name.to_string(), v))).collect()
    }
}

/// A random well-typed patch, or None when the draw was not valid (the caller draws again).
pub fn random_patch(g: &Grammar, rng: &mut StdRng) -> Option<Patch> {
    let editable: Vec<usize> = g.editable().collect();
    let of_kind = |pred: &dyn Fn(&LineKind) -> bool| -> Vec<usize> { editable.iter().copied().filter(|&i| pred(&g.lines[i].kind)).collect() };
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
    patch.valid(g).then_some(patch)
}

/// Mutation: half the time a switch, else a new patch. A switch is reset to its default one
/// time in five; ordered switches jump to a neighbour or anywhere, others to another value.
pub fn mutate(genome: &Genome, specs: &[SwitchSpec], g: &Grammar, rng: &mut StdRng) -> Genome {
    let mut child = genome.clone();
    if rng.random_bool(0.5) {
        let i = rng.random_range(0..specs.len());
        let spec = &specs[i];
        child.switches[i] = if rng.random_range(0..5) == 0 {
            spec.default
        } else if spec.ordered && rng.random_bool(0.5) {
            let at = spec.values.iter().position(|v| *v == child.switches[i]).unwrap_or(0) as i64;
            let step = if rng.random_bool(0.5) { 1 } else { -1 };
            spec.values[(at + step).clamp(0, spec.values.len() as i64 - 1) as usize]
        } else {
            *spec.values.choose(rng).expect("a switch has values")
        };
    } else {
        for _ in 0..32 {
            if let Some(p) = random_patch(g, rng) {
                child.patches.push(p);
                break;
            }
        }
    }
    child
}

/// Crossover: uniform on switches, two-point on the patch lists.
pub fn crossover(a: &Genome, b: &Genome, rng: &mut StdRng) -> Genome {
    let switches = a.switches.iter().zip(&b.switches).map(|(x, y)| if rng.random_bool(0.5) { *x } else { *y }).collect();
    let cut = |n: usize, rng: &mut StdRng| {
        let (mut i, mut j) = (rng.random_range(0..=n), rng.random_range(0..=n));
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        (i, j)
    };
    let (i, j) = cut(a.patches.len(), rng);
    let (k, l) = cut(b.patches.len(), rng);
    let patches = a.patches[..i].iter().chain(&b.patches[k..l]).chain(&a.patches[j..]).cloned().collect();
    Genome { switches, patches }
}
