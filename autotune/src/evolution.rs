//! The genetic-improvement loop: a population of genomes evaluated by an [`Evaluator`],
//! genotype and phenotype tabu lists, truncation selection of the best half among variants
//! that answer exactly like the reference and beat it by more than the timing noise, with
//! fewer changes first among variants within the noise of each other (parsimony).
//!
//! Each generation may run on a fresh subset of the training reads ([`Evaluator::begin_generation`]);
//! the reference is timed again on it, and a variant's fitness is its time relative to the
//! reference of its generation, so times from different subsets compare.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;

use crate::genome::{crossover, mutate, Genome, Sources, SwitchSpec};
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
    /// The inexact kernels' hits differ from the reference's (see [`crate::hit_oracle`]).
    WrongHits(String),
    /// k,l penalty of exact_match against the reference (0 = same answers) and GPU time in ms.
    Ran { penalty: u64, ms: f64 },
}

/// A variant as the evaluator gets it: the exact_match source, the inexact kernels' source
/// (None: the unmodified one), and every kernel's switches by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub exact: String,
    pub inexact: Option<String>,
    pub switches: Vec<(String, u32)>,
}

pub trait Evaluator {
    fn evaluate(&mut self, variant: &Variant) -> Outcome;

    /// Called with a whole generation's new variants before they are evaluated one by one,
    /// e.g. to compile them in parallel.
    fn prepare(&mut self, _variants: &[Variant]) {}

    /// Called before each generation (0 = the initial population): the evaluator may switch
    /// to another subset of its training reads, the same for every variant until the next call.
    fn begin_generation(&mut self, _generation: usize) {}
}

impl<E: Evaluator> Evaluator for &mut E {
    fn evaluate(&mut self, variant: &Variant) -> Outcome {
        (**self).evaluate(variant)
    }
    fn prepare(&mut self, variants: &[Variant]) {
        (**self).prepare(variants)
    }
    fn begin_generation(&mut self, generation: usize) {
        (**self).begin_generation(generation)
    }
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
    /// Time relative to the reference on the same reads (None: not correct).
    pub relative: Option<f64>,
}

impl Scored {
    fn new(genome: Genome, outcome: Outcome, reference_ms: f64) -> Scored {
        let relative = match outcome {
            Outcome::Ran { penalty: 0, ms } if reference_ms > 0.0 && reference_ms.is_finite() => {
                Some(ms / reference_ms)
            }
            _ => None,
        };
        Scored { genome, outcome, relative }
    }
}

/// Best and median time of a generation's correct variants (none when none was correct).
pub type GenerationTimes = (Option<f64>, Option<f64>);

/// Best and median time (ms on the first generation's reads: relative times scaled by the
/// first reference time) of the correct variants of each generation, and the search's counts.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub reference_ms: f64,
    pub generations: Vec<GenerationTimes>,
    pub evaluated: usize,
    /// Genomes (or phenotypes) drawn again and refused.
    pub tabu_hits: usize,
    /// Of those, the ones whose genome was new but whose sources and defines were not.
    pub phenotype_hits: usize,
    /// Mutations that the operator redrew because their genome had been seen (its own
    /// look-up of the genotype list, before a genome is drawn; not tabu hits).
    pub redraws: usize,
    /// What the evolved variants gave (not the references of each generation, nor the
    /// minimisation's trials).
    pub outcomes: Outcomes,
}

/// Counts of [`Outcome`]s by kind: where a run's evaluations went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcomes {
    pub ran: usize,
    /// Ran, with exact_match's intervals differing from the reference's (penalty > 0).
    pub penalised: usize,
    pub wrong_hits: usize,
    pub compile_errors: usize,
    pub illegal: usize,
    pub faults: usize,
}

impl Outcomes {
    pub fn count(&mut self, outcome: &Outcome) {
        let n = match outcome {
            Outcome::Ran { penalty: 0, .. } => &mut self.ran,
            Outcome::Ran { .. } => &mut self.penalised,
            Outcome::WrongHits(_) => &mut self.wrong_hits,
            Outcome::CompileError(_) => &mut self.compile_errors,
            Outcome::Illegal(_) => &mut self.illegal,
            Outcome::Fault(_) => &mut self.faults,
        };
        *n += 1;
    }
}

impl History {
    /// Share of the drawn genomes that had been seen before.
    pub fn tabu_rate(&self) -> f64 {
        let drawn = self.tabu_hits + self.evaluated;
        if drawn == 0 {
            0.0
        } else {
            self.tabu_hits as f64 / drawn as f64
        }
    }
}

/// The sources (patched and guarded) and defines of a genome.
pub fn phenotype(sources: Sources, specs: &[SwitchSpec], genome: &Genome) -> Variant {
    Variant {
        exact: apply(sources.exact, &genome.patches),
        inexact: sources.inexact.map(|g| apply(g, &genome.inexact_patches)),
        switches: genome.assignments(specs),
    }
}

/// Further mutations of a refused child before breeding starts again from the parents.
const TABU_WALK: usize = 4;
/// Redraws of a mutation whose genome was seen, before it is drawn anyway.
const REDRAWS: usize = 8;

pub struct Evolution<'a, E: Evaluator> {
    pub sources: Sources<'a>,
    pub specs: &'a [SwitchSpec],
    pub evaluator: E,
    pub settings: Settings,
    rng: StdRng,
    genotypes: HashSet<Genome>,
    phenotypes: HashSet<u64>,
    pub history: History,
    /// The reference's time on the current generation's reads.
    generation_reference_ms: f64,
}

fn hash_of(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl<'a, E: Evaluator> Evolution<'a, E> {
    pub fn new(sources: Sources<'a>, specs: &'a [SwitchSpec], evaluator: E, settings: Settings) -> Self {
        let rng = StdRng::seed_from_u64(settings.seed);
        Evolution {
            sources,
            specs,
            evaluator,
            settings,
            rng,
            genotypes: HashSet::new(),
            phenotypes: HashSet::new(),
            history: History::default(),
            generation_reference_ms: f64::INFINITY,
        }
    }

    /// Sources and defines of a genome.
    pub fn phenotype(&self, genome: &Genome) -> Variant {
        phenotype(self.sources, self.specs, genome)
    }

    /// A mutant of `parent` that the genotype list has not seen, when one of a few draws is
    /// (the mutation looks the list up itself, so it rarely regenerates a seen genome).
    pub fn mutant(&mut self, parent: &Genome) -> Genome {
        let mut child = mutate(parent, self.specs, self.sources, &mut self.rng);
        for _ in 0..REDRAWS {
            if !self.genotypes.contains(&child) {
                break;
            }
            self.history.redraws += 1;
            child = mutate(parent, self.specs, self.sources, &mut self.rng);
        }
        child
    }

    /// Admits a genome unless it (or its preprocessed sources) was seen before.
    fn admit(&mut self, genome: &Genome) -> bool {
        if self.genotypes.contains(genome) {
            self.history.tabu_hits += 1;
            return false;
        }
        self.genotypes.insert(genome.clone());
        let v = self.phenotype(genome);
        let mut key = preprocess(&v.exact, &v.switches);
        if let Some(inexact) = &v.inexact {
            key.push('\u{0}');
            key.push_str(&preprocess(inexact, &v.switches));
        }
        for (name, value) in &v.switches {
            key.push_str(&format!("{name}={value};"));
        }
        if !self.phenotypes.insert(hash_of(&key)) {
            self.history.tabu_hits += 1;
            self.history.phenotype_hits += 1;
            return false;
        }
        true
    }

    /// Evaluates admitted genomes: prepared together, then one by one.
    fn evaluate_all(&mut self, genomes: Vec<Genome>) -> Vec<Scored> {
        let variants: Vec<Variant> = genomes.iter().map(|g| self.phenotype(g)).collect();
        self.evaluator.prepare(&variants);
        self.history.evaluated += genomes.len();
        let reference_ms = self.generation_reference_ms;
        genomes
            .into_iter()
            .zip(variants)
            .map(|(genome, v)| {
                let outcome = self.evaluator.evaluate(&v);
                self.history.outcomes.count(&outcome);
                Scored::new(genome, outcome, reference_ms)
            })
            .collect()
    }

    /// New admitted genomes, up to `n` (or until attempts or time run out). A refused child is
    /// mutated further a few times before `make` draws a new one.
    fn breed(&mut self, n: usize, start: Instant, make: &mut dyn FnMut(&mut Self) -> Genome) -> Vec<Genome> {
        let mut out = Vec::new();
        let mut attempts = 0;
        while out.len() < n && attempts < 50 * n.max(1) && start.elapsed() < self.settings.budget {
            attempts += 1;
            let mut g = make(self);
            for _ in 0..TABU_WALK {
                if self.admit(&g) {
                    out.push(g);
                    break;
                }
                g = self.mutant(&g);
            }
        }
        out
    }

    /// Starts generation `generation`: the evaluator's reads for it, and the reference's time on them.
    fn begin_generation(&mut self, generation: usize, reference: &Genome) {
        self.evaluator.begin_generation(generation);
        let v = self.phenotype(reference);
        self.generation_reference_ms = match self.evaluator.evaluate(&v) {
            Outcome::Ran { penalty: 0, ms } => ms,
            _ => f64::INFINITY,
        };
        if generation == 0 {
            self.history.reference_ms = self.generation_reference_ms;
        }
    }

    /// Sorts best first: correct before incorrect; among correct ones, by time in steps of
    /// the noise, then fewer changes, then time.
    fn rank(&self, population: &mut [Scored]) {
        let step = self.settings.noise.max(1e-9);
        let specs = self.specs;
        population.sort_by(|a, b| match (a.relative, b.relative) {
            (Some(x), Some(y)) => {
                let key = |s: &Scored, r: f64| ((r / step).floor() as i64, s.genome.size(specs));
                key(a, x).cmp(&key(b, y)).then(x.partial_cmp(&y).unwrap())
            }
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
    }

    /// Runs the evolution; returns the final population, best first.
    pub fn run(&mut self, progress: &mut dyn FnMut(usize, &History)) -> Vec<Scored> {
        let start = Instant::now();
        let reference = Genome::reference(self.specs);
        assert!(self.admit(&reference), "the reference is new");
        self.history.evaluated += 1;
        self.begin_generation(0, &reference);
        let threshold = 1.0 - self.settings.noise;

        // Unique single mutants of the reference.
        let initial = self.breed(self.settings.population, start, &mut |evo| evo.mutant(&reference));
        let mut population = self.evaluate_all(initial);
        for generation in 0..self.settings.generations {
            if start.elapsed() >= self.settings.budget {
                break;
            }
            // Truncation selection: the best half of the correct variants faster than the reference.
            let mut parents: Vec<Scored> =
                population.iter().filter(|s| s.relative.is_some_and(|r| r < threshold)).cloned().collect();
            self.rank(&mut parents);
            parents.truncate((self.settings.population / 2).max(1));
            self.record(&population);
            progress(generation, &self.history);
            let wanted = self.settings.population.saturating_sub(parents.len());
            let children = self.breed(wanted, start, &mut |evo| match parents.len() {
                0 => evo.mutant(&reference),
                1 => evo.mutant(&parents[0].genome),
                _ => {
                    let a = parents.choose(&mut evo.rng).unwrap().genome.clone();
                    let b = parents.choose(&mut evo.rng).unwrap().genome.clone();
                    let child = crossover(&a, &b, &mut evo.rng);
                    evo.mutant(&child)
                }
            });
            // The children run on a fresh subset; the parents keep their relative times.
            self.begin_generation(generation + 1, &reference);
            let mut next = parents;
            next.extend(self.evaluate_all(children));
            population = next;
        }
        self.record(&population);
        self.rank(&mut population);
        population
    }

    fn record(&mut self, population: &[Scored]) {
        let mut times: Vec<f64> =
            population.iter().filter_map(|s| s.relative).map(|r| r * self.history.reference_ms).collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let best = times.first().copied();
        let median = (!times.is_empty()).then(|| times[times.len() / 2]);
        self.history.generations.push((best, median));
    }

    /// Drops patches (and resets switches) that do not help: a change is undone when the
    /// variant without it is still correct and not slower beyond the noise.
    pub fn minimise(&mut self, best: &Genome) -> Genome {
        let mut current = best.clone();
        let Outcome::Ran { penalty: 0, ms: mut current_ms } = self.evaluator.evaluate(&self.phenotype(&current)) else {
            return current;
        };
        let mut keep_if_no_worse = |evo: &mut Self, trial: Genome, current: &mut Genome| -> bool {
            match evo.evaluator.evaluate(&evo.phenotype(&trial)) {
                Outcome::Ran { penalty: 0, ms } if ms <= current_ms * (1.0 + evo.settings.noise) => {
                    *current = trial;
                    current_ms = current_ms.min(ms);
                    true
                }
                _ => false,
            }
        };
        for inexact in [false, true] {
            let mut i = 0;
            loop {
                let list = if inexact { &current.inexact_patches } else { &current.patches };
                if i >= list.len() {
                    break;
                }
                let mut trial = current.clone();
                if inexact { &mut trial.inexact_patches } else { &mut trial.patches }.remove(i);
                if !keep_if_no_worse(self, trial, &mut current) {
                    i += 1;
                }
            }
        }
        for s in 0..self.specs.len() {
            if current.switches[s] == self.specs[s].default {
                continue;
            }
            let mut trial = current.clone();
            trial.switches[s] = self.specs[s].default;
            keep_if_no_worse(self, trial, &mut current);
        }
        current
    }
}
