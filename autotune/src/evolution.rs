//! The genetic-improvement loop: a population of genomes evaluated by an [`Evaluator`],
//! genotype and phenotype tabu lists, truncation selection of the best half among variants
//! that answer exactly like the reference and beat it by more than the timing noise.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;

use crate::genome::{crossover, mutate, Genome, SwitchSpec};
use crate::grammar::Grammar;
use crate::patch::apply;
use crate::preprocess::preprocess;

/// What evaluating one variant gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The switches cannot run together (not compiled).
    Illegal(String),
    /// NVRTC rejected the source.
    CompileError(String),
    /// The kernel faulted or hung (the worker was restarted).
    Fault(String),
    /// k,l penalty against the reference (0 = same answers) and kernel time in ms.
    Ran { penalty: u64, ms: f64 },
}

pub trait Evaluator {
    fn evaluate(&mut self, source: &str, switches: &[(String, u32)]) -> Outcome;

    /// Called with a whole generation's new variants before they are evaluated one by one,
    /// e.g. to compile them in parallel.
    fn prepare(&mut self, _variants: &[(String, Vec<(String, u32)>)]) {}
}

#[derive(Clone, Debug)]
pub struct Settings {
    pub population: usize,
    pub generations: usize,
    pub budget: Duration,
    pub seed: u64,
    /// Relative timing noise measured on the reference; a variant must be faster by more.
    pub noise: f64,
}

#[derive(Clone, Debug)]
pub struct Scored {
    pub genome: Genome,
    pub outcome: Outcome,
}

impl Scored {
    fn fitness(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Ran { penalty: 0, ms } => Some(ms),
            _ => None,
        }
    }
}

/// Best and median time (ms) of the correct variants of each generation.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub reference_ms: f64,
    pub generations: Vec<(Option<f64>, Option<f64>)>,
    pub evaluated: usize,
    pub tabu_hits: usize,
}

pub struct Evolution<'a, E: Evaluator> {
    pub grammar: &'a Grammar,
    pub specs: &'a [SwitchSpec],
    pub evaluator: E,
    pub settings: Settings,
    rng: StdRng,
    genotypes: HashSet<Genome>,
    phenotypes: HashSet<u64>,
    pub history: History,
}

fn hash_of(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl<'a, E: Evaluator> Evolution<'a, E> {
    pub fn new(grammar: &'a Grammar, specs: &'a [SwitchSpec], evaluator: E, settings: Settings) -> Self {
        let rng = StdRng::seed_from_u64(settings.seed);
        Evolution { grammar, specs, evaluator, settings, rng, genotypes: HashSet::new(), phenotypes: HashSet::new(), history: History::default() }
    }

    /// Source and defines of a genome.
    pub fn phenotype(&self, genome: &Genome) -> (String, Vec<(String, u32)>) {
        (apply(self.grammar, &genome.patches), genome.assignments(self.specs))
    }

    /// Admits a genome unless it (or its preprocessed source) was seen before.
    fn admit(&mut self, genome: &Genome) -> bool {
        if !self.genotypes.insert(genome.clone()) {
            self.history.tabu_hits += 1;
            return false;
        }
        let (source, defines) = self.phenotype(genome);
        let mut key = preprocess(&source, &defines);
        for (name, value) in &defines {
            key.push_str(&format!("{name}={value};"));
        }
        if !self.phenotypes.insert(hash_of(&key)) {
            self.history.tabu_hits += 1;
            return false;
        }
        true
    }

    /// Evaluates admitted genomes: prepared together, then one by one.
    fn evaluate_all(&mut self, genomes: Vec<Genome>) -> Vec<Scored> {
        let variants: Vec<(String, Vec<(String, u32)>)> = genomes.iter().map(|g| self.phenotype(g)).collect();
        self.evaluator.prepare(&variants);
        self.history.evaluated += genomes.len();
        genomes.into_iter().zip(variants).map(|(genome, (src, defs))| Scored { outcome: self.evaluator.evaluate(&src, &defs), genome }).collect()
    }

    /// New admitted genomes from `make`, up to `n` (or until attempts or time run out).
    fn breed(&mut self, n: usize, start: Instant, make: &mut dyn FnMut(&mut Self) -> Genome) -> Vec<Genome> {
        let mut out = Vec::new();
        let mut attempts = 0;
        while out.len() < n && attempts < 50 * n.max(1) && start.elapsed() < self.settings.budget {
            attempts += 1;
            let g = make(self);
            if self.admit(&g) {
                out.push(g);
            }
        }
        out
    }

    /// Runs the evolution; returns the final population, best first.
    pub fn run(&mut self, progress: &mut dyn FnMut(usize, &History)) -> Vec<Scored> {
        let start = Instant::now();
        let reference = Genome::reference(self.specs);
        assert!(self.admit(&reference), "the reference is new");
        let reference_scored = self.evaluate_all(vec![reference.clone()]).remove(0);
        self.history.reference_ms = reference_scored.fitness().unwrap_or(f64::INFINITY);
        let threshold = self.history.reference_ms * (1.0 - self.settings.noise);

        // Unique single mutants of the reference.
        let initial = self.breed(self.settings.population, start, &mut |evo| mutate(&reference, evo.specs, evo.grammar, &mut evo.rng));
        let mut population = self.evaluate_all(initial);
        for generation in 0..self.settings.generations {
            if start.elapsed() >= self.settings.budget {
                break;
            }
            // Truncation selection: the best half of the correct variants faster than the reference.
            let mut parents: Vec<Scored> = population.iter().filter(|s| s.fitness().is_some_and(|ms| ms < threshold)).cloned().collect();
            parents.sort_by(|a, b| a.fitness().partial_cmp(&b.fitness()).unwrap());
            parents.truncate((self.settings.population / 2).max(1));
            self.record(&population);
            progress(generation, &self.history);
            let wanted = self.settings.population.saturating_sub(parents.len());
            let children = self.breed(wanted, start, &mut |evo| match parents.len() {
                0 => mutate(&reference, evo.specs, evo.grammar, &mut evo.rng),
                1 => mutate(&parents[0].genome, evo.specs, evo.grammar, &mut evo.rng),
                _ => {
                    let a = parents.choose(&mut evo.rng).unwrap().genome.clone();
                    let b = parents.choose(&mut evo.rng).unwrap().genome.clone();
                    mutate(&crossover(&a, &b, &mut evo.rng), evo.specs, evo.grammar, &mut evo.rng)
                }
            });
            let mut next = parents;
            next.extend(self.evaluate_all(children));
            population = next;
        }
        self.record(&population);
        population.sort_by(|a, b| match (a.fitness(), b.fitness()) {
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap(),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        population
    }

    fn record(&mut self, population: &[Scored]) {
        let mut times: Vec<f64> = population.iter().filter_map(Scored::fitness).collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let best = times.first().copied();
        let median = (!times.is_empty()).then(|| times[times.len() / 2]);
        self.history.generations.push((best, median));
    }

    /// Drops patches (and resets switches) that do not help: a change is undone when the
    /// variant without it is still correct and not slower beyond the noise.
    pub fn minimise(&mut self, best: &Genome) -> Genome {
        let mut current = best.clone();
        let (src, defs) = self.phenotype(&current);
        let Outcome::Ran { penalty: 0, ms: mut current_ms } = self.evaluator.evaluate(&src, &defs) else { return current };
        let mut i = 0;
        while i < current.patches.len() {
            let mut trial = current.clone();
            trial.patches.remove(i);
            let (src, defs) = self.phenotype(&trial);
            match self.evaluator.evaluate(&src, &defs) {
                Outcome::Ran { penalty: 0, ms } if ms <= current_ms * (1.0 + self.settings.noise) => {
                    current = trial;
                    current_ms = current_ms.min(ms);
                }
                _ => i += 1,
            }
        }
        for s in 0..self.specs.len() {
            if current.switches[s] == self.specs[s].default {
                continue;
            }
            let mut trial = current.clone();
            trial.switches[s] = self.specs[s].default;
            let (src, defs) = self.phenotype(&trial);
            if let Outcome::Ran { penalty: 0, ms } = self.evaluator.evaluate(&src, &defs) {
                if ms <= current_ms * (1.0 + self.settings.noise) {
                    current = trial;
                    current_ms = current_ms.min(ms);
                }
            }
        }
        current
    }
}
