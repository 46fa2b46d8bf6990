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

    /// Evaluates a genome unless it (or its preprocessed source) was seen before.
    fn try_evaluate(&mut self, genome: Genome) -> Option<Scored> {
        if !self.genotypes.insert(genome.clone()) {
            self.history.tabu_hits += 1;
            return None;
        }
        let (source, defines) = self.phenotype(&genome);
        let mut key = preprocess(&source, &defines);
        for (name, value) in &defines {
            key.push_str(&format!("{name}={value};"));
        }
        if !self.phenotypes.insert(hash_of(&key)) {
            self.history.tabu_hits += 1;
            return None;
        }
        self.history.evaluated += 1;
        let outcome = self.evaluator.evaluate(&source, &defines);
        Some(Scored { genome, outcome })
    }

    /// Runs the evolution; returns the final population, best first.
    pub fn run(&mut self, progress: &mut dyn FnMut(usize, &History)) -> Vec<Scored> {
        let start = Instant::now();
        let reference = Genome::reference(self.specs);
        let reference_scored = self.try_evaluate(reference.clone()).expect("the reference is new");
        self.history.reference_ms = reference_scored.fitness().unwrap_or(f64::INFINITY);
        let threshold = self.history.reference_ms * (1.0 - self.settings.noise);

        // Unique single mutants of the reference.
        let mut population = Vec::new();
        let mut attempts = 0;
        while population.len() < self.settings.population && attempts < 50 * self.settings.population && start.elapsed() < self.settings.budget {
            attempts += 1;
            let g = mutate(&reference, self.specs, self.grammar, &mut self.rng);
            if let Some(s) = self.try_evaluate(g) {
                population.push(s);
            }
        }
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
            let mut next = parents.clone();
            let mut attempts = 0;
            while next.len() < self.settings.population && attempts < 50 * self.settings.population && start.elapsed() < self.settings.budget {
                attempts += 1;
                let child = match parents.len() {
                    0 => mutate(&reference, self.specs, self.grammar, &mut self.rng),
                    1 => mutate(&parents[0].genome, self.specs, self.grammar, &mut self.rng),
                    _ => {
                        let a = parents.choose(&mut self.rng).unwrap().genome.clone();
                        let b = parents.choose(&mut self.rng).unwrap().genome.clone();
                        mutate(&crossover(&a, &b, &mut self.rng), self.specs, self.grammar, &mut self.rng)
                    }
                };
                if let Some(s) = self.try_evaluate(child) {
                    next.push(s);
                }
            }
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
