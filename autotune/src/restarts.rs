//! Independent restarts within one budget, and what their winners share: several short runs,
//! and the changes that recur across their winners, are worth more than one long run (the GI
//! lessons of ../shared/README.md).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::evolution::{Evaluator, Evolution, History, Settings};
use crate::genome::{Genome, Sources, SwitchSpec};

/// One restart's minimised winner (None: no correct variant beat the reference), its time
/// relative to the reference, and its history.
#[derive(Clone, Debug)]
pub struct Restart {
    pub seed: u64,
    pub winner: Option<Genome>,
    pub relative: Option<f64>,
    pub history: History,
}

/// Runs `n` restarts of `per_restart` each, seeds `settings.seed`, `+1`, ...; each is a fresh
/// evolution (its own tabu lists) on the same evaluator, and its best variant is minimised.
/// `progress(restart, generation, history)`.
pub fn run<E: Evaluator>(
    sources: Sources,
    specs: &[SwitchSpec],
    evaluator: &mut E,
    settings: &Settings,
    n: usize,
    per_restart: Duration,
    progress: &mut dyn FnMut(usize, usize, &History),
) -> Vec<Restart> {
    let mut out = Vec::new();
    for r in 0..n.max(1) {
        let seed = settings.seed + r as u64;
        let settings = Settings { seed, budget: per_restart, ..settings.clone() };
        let mut evo = Evolution::new(sources, specs, &mut *evaluator, settings);
        let population = evo.run(&mut |g, h| progress(r, g, h));
        let best = population.into_iter().find(|s| s.relative.is_some_and(|x| x < 1.0 - evo.settings.noise));
        let (winner, relative) = match best {
            Some(b) => (Some(evo.minimise(&b.genome)), b.relative),
            None => (None, None),
        };
        out.push(Restart { seed, winner, relative, history: evo.history.clone() });
    }
    out
}

/// The changes of the winners (switches away from their defaults, `name=value`, and patches
/// in words, `describe` naming each) with how many winners have them, most frequent first.
pub fn recurring(
    winners: &[&Genome],
    specs: &[SwitchSpec],
    describe: &dyn Fn(&Genome) -> Vec<String>,
) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in winners {
        let mut changes: Vec<String> = specs
            .iter()
            .zip(&w.switches)
            .filter(|(s, v)| s.default != **v)
            .map(|(s, v)| format!("{}={}", s.name, v.map_or("unset".to_string(), |v| v.to_string())))
            .collect();
        changes.extend(describe(w));
        changes.sort();
        changes.dedup();
        for c in changes {
            *counts.entry(c).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// The fastest restart's winner, if any.
pub fn best(restarts: &[Restart]) -> Option<&Restart> {
    restarts.iter().filter(|r| r.winner.is_some()).min_by(|a, b| a.relative.partial_cmp(&b.relative).unwrap())
}
