//! A team pass's launch and its tail, replayed on the CPU: each team takes the next read of the
//! pass's queue when its own ends (as inexact_level does), so the launch lasts until its last
//! team ends, and while the heaviest reads run on a few teams the rest of the SMs wait. The
//! order of the queue decides that tail. This replays one launch of a team pass on `teams`
//! teams (each read costs its critical-path pops in the level search) for several queue orders:
//! as the pass before hands the reads on, heavy first by a weight the GPU knows of a read before
//! the pass (in the kernels' buckets, as `level_order` sorts, and exactly), and longest first by
//! the true cost (the bound no order known beforehand beats).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use bcuda::gpu::queue_order::weight_bucket;

/// One read that reaches a team pass: its cost there and what the pass before knew of it.
#[derive(Clone, Copy, Debug)]
pub struct PassRead {
    /// Critical-path pops of its level search.
    pub cost: u64,
    /// What the GPU knows of the read before the pass (its root chain's weight, which
    /// `level_order` sorts by, or the state of the pass before where it handed the read on).
    pub weight: u64,
}

/// How long the teams take to run `costs` in this order, each taking the next read as its
/// own ends (list scheduling).
pub fn makespan(costs: impl Iterator<Item = u64>, teams: usize) -> u64 {
    let mut ends: BinaryHeap<Reverse<u64>> = (0..teams.max(1)).map(|_| Reverse(0)).collect();
    for c in costs {
        let Reverse(free_at) = ends.pop().expect("at least one team");
        ends.push(Reverse(free_at + c));
    }
    ends.into_iter().map(|Reverse(t)| t).max().unwrap_or(0)
}

/// The queue orders replayed, by name.
pub const ORDERS: [&str; 4] = ["as handed on", "by weight bucket", "by weight", "longest first"];

/// The reads of one launch in each of [`ORDERS`].
fn ordered(launch: &[PassRead]) -> [Vec<u64>; 4] {
    let by = |key: &dyn Fn(&PassRead) -> u64| {
        let mut v = launch.to_vec();
        v.sort_by_key(|r| Reverse(key(r)));
        v.iter().map(|r| r.cost).collect::<Vec<u64>>()
    };
    [
        launch.iter().map(|r| r.cost).collect(),
        by(&|r| weight_bucket(r.weight) as u64),
        by(&|r| r.weight),
        by(&|r| r.cost),
    ]
}

/// What one order gives, averaged over the sampled launches.
#[derive(Clone, Copy, Debug, Default)]
pub struct OrderResult {
    /// The launch's span against the reads' order as the pass before hands them on.
    pub span_ratio: f64,
    /// The teams' work over teams x span: the share of the launch its teams hold.
    pub fill: f64,
}

/// Samples `launches` launches of `reads_per_launch` reads each (with replacement, seeded) and
/// replays each order on `teams` teams.
pub fn replay(reads: &[PassRead], reads_per_launch: usize, teams: usize, launches: u64) -> [OrderResult; 4] {
    let mut out = [OrderResult::default(); 4];
    if reads.is_empty() || reads_per_launch == 0 {
        return out;
    }
    for seed in 0..launches {
        let mut rng = StdRng::seed_from_u64(seed);
        let launch: Vec<PassRead> = (0..reads_per_launch).map(|_| reads[rng.random_range(0..reads.len())]).collect();
        let work: u64 = launch.iter().map(|r| r.cost).sum();
        let spans = ordered(&launch).map(|costs| makespan(costs.into_iter(), teams));
        for (o, &span) in out.iter_mut().zip(&spans) {
            o.span_ratio += span as f64 / spans[0].max(1) as f64 / launches as f64;
            o.fill += work as f64 / (teams as f64 * span.max(1) as f64) / launches as f64;
        }
    }
    out
}

/// The launch replayed: which pass, what its reads' weight is, and its teams.
pub struct Launch<'a> {
    pub pass: &'a str,
    pub weight: &'a str,
    pub teams: usize,
}

/// Prints the replay of `launch` for a batch of `batch_reads` reads, of which `reads.len()`
/// of `all_reads` reach the pass.
pub fn print(launch: &Launch, reads: &[PassRead], all_reads: usize, batch_reads: usize) {
    let per_launch = (batch_reads as f64 * reads.len() as f64 / all_reads.max(1) as f64).round() as usize;
    let (pass, teams) = (launch.pass, launch.teams);
    println!(
        "launch tail, {pass}: a {batch_reads}-read batch's launch ({per_launch} reads reach it, \
         sampled from {} of {all_reads}) on {teams} teams, 8 launches; weight: {}",
        reads.len(),
        launch.weight
    );
    println!("queue order\tspan (of as handed on)\tteams' fill of the span");
    for (name, r) in ORDERS.iter().zip(replay(reads, per_launch, teams, 8)) {
        println!("{name}\t{:.3}\t{:.3}", r.span_ratio, r.fill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_heavy_read_last_makes_the_tail() {
        // Two teams, four reads of 1 and one of 4: last, it ends at 6; first, at 4.
        assert_eq!(makespan([1, 1, 1, 1, 4].into_iter(), 2), 6);
        assert_eq!(makespan([4, 1, 1, 1, 1].into_iter(), 2), 4);
    }

    #[test]
    fn longest_first_shortens_a_spread_launch() {
        let reads: Vec<PassRead> = (0..200u64).map(|i| PassRead { cost: (i * 7919) % 997 + 1, weight: i }).collect();
        let r = replay(&reads, 150, 16, 4);
        assert!((r[0].span_ratio - 1.0).abs() < 1e-9);
        assert!(r[3].span_ratio <= 1.0 + 1e-9 && r[3].fill >= r[0].fill - 1e-9);
    }
}
