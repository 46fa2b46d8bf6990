//! How a `--budget` is spent: independent restarts, each with a population and a number of
//! generations such that every restart completes at least [`MIN_GENERATIONS`] generations.

use std::time::Duration;

/// Generations each restart must complete.
pub const MIN_GENERATIONS: usize = 10;
/// Population bounds: fewer variants than this per generation select little; more than the
/// upper bound are rarely new (the switches are few) and slow each generation.
pub const MIN_POPULATION: usize = 8;
pub const MAX_POPULATION: usize = 1000;

/// A run's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub restarts: usize,
    pub population: usize,
    pub generations: usize,
    /// Budget of each restart (what is left at the end goes to minimising and validating).
    pub per_restart: Duration,
}

/// Share of the budget kept for minimisation and the held-out validation.
const FINISH_SHARE: f64 = 0.1;

/// The plan for `budget` when one variant takes `per_variant` (compile share and timed runs),
/// with `restarts` restarts (2 or 3 wanted; fewer when the budget cannot give each restart
/// [`MIN_GENERATIONS`] generations of [`MIN_POPULATION`]). A restart evaluates
/// `population * (generations + 1)` variants (the initial population, then the children of
/// each generation; parents are not evaluated again, so that is an upper bound).
pub fn plan(budget: Duration, per_variant: Duration, restarts: usize) -> Plan {
    let usable = budget.as_secs_f64() * (1.0 - FINISH_SHARE);
    let per_variant = per_variant.as_secs_f64().max(1e-3);
    let variants_per_restart = |r: usize| usable / r as f64 / per_variant;
    let mut restarts = restarts.max(1);
    while restarts > 1 && variants_per_restart(restarts) < (MIN_POPULATION * (MIN_GENERATIONS + 1)) as f64 {
        restarts -= 1;
    }
    let variants = variants_per_restart(restarts);
    let population = ((variants / (MIN_GENERATIONS + 1) as f64) as usize).clamp(MIN_POPULATION, MAX_POPULATION);
    let generations = ((variants / population as f64) as usize).saturating_sub(1).max(MIN_GENERATIONS);
    Plan { restarts, population, generations, per_restart: Duration::from_secs_f64(usable / restarts as f64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// The default run (30 minutes) with a variant every 0.5 s: three restarts of at least ten
    /// generations that fit in the budget.
    #[test]
    fn a_default_budget_gives_three_restarts_of_ten_generations() {
        let p = plan(secs(1800.0), secs(0.5), 3);
        assert_eq!(p.restarts, 3);
        assert!(p.generations >= MIN_GENERATIONS, "{p:?}");
        let evaluations = p.restarts * p.population * (p.generations + 1);
        assert!(evaluations as f64 * 0.5 <= 1800.0 * 0.9 + 1e-6, "{p:?} takes {} s", evaluations as f64 * 0.5);
        assert!(p.population >= 40, "{p:?}");
    }

    /// Slow variants: fewer restarts and small populations, never fewer than ten generations.
    #[test]
    fn slow_variants_shrink_restarts_then_population() {
        let p = plan(secs(1800.0), secs(10.0), 3);
        assert_eq!(p.restarts, 1, "{p:?}");
        assert_eq!((p.population, p.generations), (14, 10), "{p:?}");
        let p = plan(secs(60.0), secs(10.0), 3);
        assert_eq!((p.restarts, p.population, p.generations), (1, MIN_POPULATION, MIN_GENERATIONS));
    }

    /// Fast variants: the population is capped and the generations take the rest.
    #[test]
    fn fast_variants_get_more_generations() {
        let p = plan(secs(7200.0), secs(0.01), 2);
        assert_eq!((p.restarts, p.population), (2, MAX_POPULATION));
        assert!(p.generations > 100, "{p:?}");
        assert_eq!(p.per_restart, secs(7200.0 * 0.9 / 2.0));
    }
}
