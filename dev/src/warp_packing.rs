//! Several reads per warp in converged rounds: a replay of the level search's groups of chains
//! (`bcuda-dev stack-profile --warp-reads`). Pass 2 gives one warp to one read, and a read's
//! group of chains often fills few of the 32 lanes. Here one warp serves `R` reads at once:
//! each round its lanes are dealt over the reads' next chains, every lane runs its chain (the
//! round lasts as long as its longest chain), then every read commits its own chains.
//!
//! What the replay assumes (printed with its table):
//! - The groups are those of the one-read search with the warp's lanes ([`GroupTrace`]); a
//!   read given fewer lanes than its group's chains runs them in order over several rounds
//!   (chain lengths depend only on the read's state, which changes only at a hit, so they
//!   stay the same), and its next group starts only after the round that ends this one. A
//!   read never takes chains of its next group in the same round (conservative: the kernel
//!   could).
//! - The chains after a group's hit (or the root chain's end) that fall in the same round run
//!   to their end and are wasted, as in the one-read kernel; those in later rounds never run.
//! - Every pop costs one step on every lane, whatever the read: no cost of memory traffic or
//!   of divergence inside a pop, no cost of more reads' pools and state.
//! - A round's commit costs a fixed `C` pop-steps, whatever the number of reads in it.
//! - One warp takes every read from one queue in order; a read that finishes leaves its slot
//!   to the next read at the next round.

use bcuda::search::level_search::GroupTrace;

/// How a round deals its lanes over the reads that want them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deal {
    /// The oldest read takes all the lanes it wants, the next read the lanes left, ...
    OldestFirst,
    /// Oldest first, but a read's group runs only whole (first fit): a read whose group does
    /// not fit in the lanes left waits for the next round, so no group pays two rounds.
    WholeGroups,
    /// Lanes are shared evenly (a read that wants fewer than its share leaves the rest to the
    /// others; lanes that do not divide evenly go to the oldest reads).
    Even,
}

impl Deal {
    pub fn name(self) -> &'static str {
        match self {
            Deal::OldestFirst => "oldest first",
            Deal::WholeGroups => "whole groups",
            Deal::Even => "even",
        }
    }

    /// The lanes each read gets, from how many chains each wants (oldest read first).
    fn grants(self, wants: &[usize], lanes: usize) -> Vec<usize> {
        match self {
            Deal::OldestFirst => {
                let mut left = lanes;
                wants
                    .iter()
                    .map(|&w| {
                        let g = w.min(left);
                        left -= g;
                        g
                    })
                    .collect()
            }
            // A group wider than the warp (not from a search of these lanes) still runs.
            Deal::WholeGroups if wants.first().is_some_and(|&w| w > lanes) => {
                let mut grants = vec![0; wants.len()];
                grants[0] = lanes;
                grants
            }
            Deal::WholeGroups => {
                let mut left = lanes;
                wants
                    .iter()
                    .map(|&w| {
                        let g = if w <= left { w } else { 0 };
                        left -= g;
                        g
                    })
                    .collect()
            }
            Deal::Even => even_grants(wants, lanes),
        }
    }
}

/// Water-filling: the largest share `s` such that every read gets `min(want, s)`, then the
/// lanes left one each to the oldest reads that want more.
fn even_grants(wants: &[usize], lanes: usize) -> Vec<usize> {
    let mut grants = vec![0; wants.len()];
    let mut left = lanes;
    loop {
        let hungry: Vec<usize> = (0..wants.len()).filter(|&i| grants[i] < wants[i]).collect();
        if hungry.is_empty() || left == 0 {
            return grants;
        }
        let share = left / hungry.len();
        if share == 0 {
            for &i in hungry.iter().take(left) {
                grants[i] += 1;
            }
            return grants;
        }
        for &i in &hungry {
            let g = share.min(wants[i] - grants[i]);
            grants[i] += g;
            left -= g;
        }
    }
}

/// What a replay cost the warp: its rounds, its pop-steps (per round its longest chain) and
/// the pops its lanes ran (wasted ones after a hit included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackingCost {
    pub rounds: u64,
    pub lane_steps: u64,
    pub pops: u64,
    /// Lanes given a chain, summed over the rounds.
    pub busy_lanes: u64,
}

impl PackingCost {
    /// The warp's steps with `overhead` pop-steps per round for the commit.
    pub fn steps(&self, overhead: u64) -> u64 {
        self.lane_steps + overhead * self.rounds
    }

    /// The share of the warp's lane-steps that run a pop.
    pub fn utilisation(&self, lanes: usize, overhead: u64) -> f64 {
        self.pops as f64 / (lanes as f64 * self.steps(overhead).max(1) as f64)
    }
}

/// A read in a slot of the warp: its groups, the group it is in and that group's next chain.
struct Slot<'a> {
    groups: &'a [GroupTrace],
    group: usize,
    next: usize,
}

impl Slot<'_> {
    fn wants(&self) -> usize {
        self.groups[self.group].chain_pops.len() - self.next
    }

    /// Runs `lanes` of its group's next chains: their longest and their pops in all. The group
    /// ends once its last committed chain has run.
    fn run(&mut self, lanes: usize) -> (u64, u64) {
        let group = &self.groups[self.group];
        let chains = &group.chain_pops[self.next..self.next + lanes];
        let longest = chains.iter().copied().max().unwrap_or(0);
        let pops = chains.iter().map(|&p| u64::from(p)).sum();
        if self.next + lanes >= group.committed {
            self.group += 1;
            self.next = 0;
        } else {
            self.next += lanes;
        }
        (u64::from(longest), pops)
    }

    fn done(&self) -> bool {
        self.group == self.groups.len()
    }
}

/// Replays the reads' groups (in queue order) on one warp of `lanes` lanes that serves up to
/// `reads_per_warp` reads at once.
pub fn replay(reads: &[&[GroupTrace]], lanes: usize, reads_per_warp: usize, deal: Deal) -> PackingCost {
    let mut queue = reads.iter().filter(|g| !g.is_empty());
    let mut slots: Vec<Slot> = Vec::with_capacity(reads_per_warp);
    let mut cost = PackingCost::default();
    loop {
        while slots.len() < reads_per_warp {
            match queue.next() {
                Some(groups) => slots.push(Slot { groups, group: 0, next: 0 }),
                None => break,
            }
        }
        if slots.is_empty() {
            return cost;
        }
        let wants: Vec<usize> = slots.iter().map(Slot::wants).collect();
        let grants = deal.grants(&wants, lanes);
        let mut longest = 0;
        cost.busy_lanes += grants.iter().sum::<usize>() as u64;
        for (slot, &g) in slots.iter_mut().zip(&grants).filter(|(_, &g)| g > 0) {
            let (chain, pops) = slot.run(g);
            longest = longest.max(chain);
            cost.pops += pops;
        }
        cost.rounds += 1;
        cost.lane_steps += longest;
        slots.retain(|s| !s.done());
    }
}

/// One read a warp as the level search runs it, with each chain's pops taken two at a time
/// (a pop and its matching child's from one lookup of counts of base pairs; docs/gpu-search.md,
/// "Two bases a lookup"): the rounds' steps and the pops' lookups, each as (one base, two bases).
/// A chain of p pops waits on ceil(p / 2) lookups.
pub fn two_pops_a_lookup(reads: &[&[GroupTrace]], lanes: usize) -> ((u64, u64), (u64, u64)) {
    let (mut steps, mut lookups) = ((0, 0), (0, 0));
    for group in reads.iter().flat_map(|groups| groups.iter()) {
        let committed = &group.chain_pops[..group.committed.min(group.chain_pops.len())];
        let last = group.chain_pops.len().min(committed.len().div_ceil(lanes.max(1)) * lanes.max(1));
        for round in group.chain_pops[..last].chunks(lanes.max(1)) {
            let pairs = |p: u32| u64::from(p.div_ceil(2));
            steps.0 += round.iter().copied().max().map_or(0, u64::from);
            steps.1 += round.iter().copied().map(pairs).max().unwrap_or(0);
            lookups.0 += round.iter().map(|&p| u64::from(p)).sum::<u64>();
            lookups.1 += round.iter().map(|&p| pairs(p)).sum::<u64>();
        }
    }
    (steps, lookups)
}

/// A bound of another kind, for comparison: one read a warp, but a lane that ends its chain
/// takes the level's next chain at once (each lane keeping its pushes to commit in bwa's
/// order), up to the next hit. A run of a read's groups of one level up to a barrier
/// ([`GroupTrace::barrier`]) is scheduled in order on the lanes, each chain on the lane free
/// first; it costs the last lane's end (plus `C` once per run, as a round's commit). Only
/// committed chains run (no waste): near what balancing chain lengths could give, not what
/// packing reads gives.
pub fn refill_within_level(reads: &[&[GroupTrace]], lanes: usize) -> PackingCost {
    let mut cost = PackingCost::default();
    for groups in reads {
        let mut lane_free = vec![0u64; lanes.max(1)];
        for (i, group) in groups.iter().enumerate() {
            for &pops in &group.chain_pops[..group.committed] {
                let first = (0..lane_free.len()).min_by_key(|&l| lane_free[l]).unwrap_or(0);
                lane_free[first] += u64::from(pops);
                cost.pops += u64::from(pops);
                cost.busy_lanes += 1;
            }
            let run_ends = group.barrier || groups.get(i + 1).is_none_or(|next| next.level != group.level);
            if run_ends {
                cost.rounds += 1;
                cost.lane_steps += lane_free.iter().copied().max().unwrap_or(0);
                lane_free.iter_mut().for_each(|t| *t = 0);
            }
        }
    }
    cost
}

/// The replay's assumptions, for the table's header.
pub const ASSUMPTIONS: &str = "\
# Assumptions: groups of chains as the one-read level search formed them; a read given fewer lanes
# runs its group's chains in order over several rounds and starts its next group only after this
# one ends; chains after a hit in the same round are run and wasted; every pop costs one step on
# every lane (no memory or divergence cost, no cost of several reads' pools); a round's commit
# costs C pop-steps whatever its reads; one warp serves the whole queue in file order.";

/// Prints the replay's table for one set of reads: per reads-per-warp and deal, the rounds,
/// pop-steps, pops and lane utilisation, and per commit overhead the steps against one read
/// per warp.
pub fn print_table(label: &str, reads: &[&[GroupTrace]], lanes: usize, reads_per_warp: &[usize], overheads: &[u64]) {
    let base = replay(reads, lanes, 1, Deal::OldestFirst);
    println!(
        "{label}: {} reads with a level search, {lanes} lanes a warp",
        reads.iter().filter(|g| !g.is_empty()).count()
    );
    print!("reads/warp\tdeal\trounds\tlanes given a chain per round\tpops run");
    for c in overheads {
        print!("\tsteps C={c}\tutilisation C={c}\tvs 1 read C={c}");
    }
    println!();
    for &r in reads_per_warp {
        for deal in [Deal::OldestFirst, Deal::WholeGroups, Deal::Even] {
            if r == 1 && deal != Deal::OldestFirst {
                continue;
            }
            let cost = replay(reads, lanes, r, deal);
            let busy = cost.busy_lanes as f64 / cost.rounds.max(1) as f64;
            print!("{r}\t{}\t{}\t{busy:.1}\t{}", deal.name(), cost.rounds, cost.pops);
            for &c in overheads {
                let ratio = cost.steps(c) as f64 / base.steps(c).max(1) as f64;
                print!("\t{}\t{:.1} %\t{ratio:.3}", cost.steps(c), 100.0 * cost.utilisation(lanes, c));
            }
            println!();
        }
    }
    let ((steps, paired_steps), (lookups, paired_lookups)) = two_pops_a_lookup(reads, lanes);
    println!(
        "two pops a lookup (one read a warp): steps {steps} -> {paired_steps} ({:.3}), lookups {lookups} -> {paired_lookups} ({:.3})",
        paired_steps as f64 / steps.max(1) as f64,
        paired_lookups as f64 / lookups.max(1) as f64
    );
    let refill = refill_within_level(reads, lanes);
    print!("bound: 1\tlanes refilled within a level (no waste)\t{}\t-\t{}", refill.rounds, refill.pops);
    for &c in overheads {
        let ratio = refill.steps(c) as f64 / base.steps(c).max(1) as f64;
        print!("\t{}\t{:.1} %\t{ratio:.3}", refill.steps(c), 100.0 * refill.utilisation(lanes, c));
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(chain_pops: &[u32], committed: usize) -> GroupTrace {
        GroupTrace { chain_pops: chain_pops.to_vec(), committed, level: 1, barrier: committed < chain_pops.len() }
    }

    #[test]
    fn two_pops_a_lookup_halves_each_chain_rounded_up() {
        // Two lanes: rounds [3, 1] and [4, 9] (the chain after the last committed one shares its
        // round and runs, wasted, as in `replay`); the one after that would not run.
        let g = [group(&[3, 1, 4, 9, 7], 3)];
        let reads: Vec<&[GroupTrace]> = vec![&g];
        assert_eq!(two_pops_a_lookup(&reads, 2), ((3 + 9, 2 + 5), (3 + 1 + 4 + 9, 2 + 1 + 2 + 5)));
        let base = replay(&reads, 2, 1, Deal::OldestFirst);
        assert_eq!((base.lane_steps, base.pops), (12, 17));
    }

    #[test]
    fn deals_share_lanes() {
        assert_eq!(Deal::OldestFirst.grants(&[20, 20, 5], 32), vec![20, 12, 0]);
        assert_eq!(Deal::Even.grants(&[20, 20, 5], 32), vec![14, 13, 5]);
        assert_eq!(Deal::Even.grants(&[3, 1, 2], 32), vec![3, 1, 2]);
        assert_eq!(Deal::Even.grants(&[9, 9, 9, 9, 9], 4), vec![1, 1, 1, 1, 0]);
        assert_eq!(Deal::WholeGroups.grants(&[20, 20, 5, 8], 32), vec![20, 0, 5, 0]);
        assert_eq!(Deal::WholeGroups.grants(&[40, 1], 32), vec![32, 0]);
    }

    /// Worked by hand with 4 lanes. Read A: a group of 3 chains (2, 5, 1 pops), then one of 1
    /// chain (4). Read B: a group of 6 chains (1, 1, 1, 1, 7, 1) whose third ends in a hit
    /// (committed 3), then the rerun of the rest: 3 chains (2, 1, 1).
    #[test]
    fn replays_known_groups() {
        let a = [group(&[2, 5, 1], 3), group(&[4], 1)];
        let b = [group(&[1, 1, 1, 1, 7, 1], 3), group(&[2, 1, 1], 3)];
        let reads: Vec<&[GroupTrace]> = vec![&a, &b];
        // One read a warp: A's groups take 5 + 4 steps; B's first group runs its 4 first chains
        // (the fourth wasted), 1 step, and its rerun 2 steps.
        assert_eq!(
            replay(&reads, 4, 1, Deal::OldestFirst),
            PackingCost { rounds: 4, lane_steps: 12, pops: 8 + 4 + 4 + 4, busy_lanes: 3 + 1 + 4 + 3 }
        );
        // Two reads a warp, oldest first. Round 1: A 3 lanes (5 steps), B 1 lane (chain 1).
        // Round 2: A's second group 1 lane (4), B 3 lanes: chains 2, 3 (the hit), 4 (wasted).
        // Round 3: B's rerun, 3 lanes (2). Rounds 3, steps 5 + 4 + 2.
        assert_eq!(
            replay(&reads, 4, 2, Deal::OldestFirst),
            PackingCost { rounds: 3, lane_steps: 11, pops: 8 + 1 + 4 + 3 + 4, busy_lanes: 4 + 4 + 3 }
        );
        // Even: round 1 A 2 lanes (2, 5), B 2 (1, 1): 5 steps; round 2 A 1 lane (1), B 3 lanes:
        // chains 3 (the hit), 4 and 5 (7 pops, wasted): 7 steps; round 3 A's second group (4)
        // and B's rerun (2): 4 steps.
        assert_eq!(
            replay(&reads, 4, 2, Deal::Even),
            PackingCost { rounds: 3, lane_steps: 16, pops: 7 + 2 + 1 + 9 + 4 + 4, busy_lanes: 4 + 4 + 4 }
        );
        // Whole groups: round 1 A's first group (5 steps; B's 6 chains do not fit in 1 lane),
        // round 2 A's second (4; B's do not fit in 3), round 3 B's group, wider than the warp,
        // on all 4 lanes (1), round 4 its rerun (2).
        assert_eq!(
            replay(&reads, 4, 2, Deal::WholeGroups),
            PackingCost { rounds: 4, lane_steps: 12, pops: 8 + 4 + 4 + 4, busy_lanes: 3 + 1 + 4 + 3 }
        );
        // Two reads of one group each that fit together: one round of the longer chain.
        let (c, d) = ([group(&[3, 1], 2)], [group(&[2, 2], 2)]);
        let pair: Vec<&[GroupTrace]> = vec![&c, &d];
        assert_eq!(replay(&pair, 4, 1, Deal::WholeGroups).lane_steps, 5);
        assert_eq!(
            replay(&pair, 4, 2, Deal::WholeGroups),
            PackingCost { rounds: 1, lane_steps: 3, pops: 8, busy_lanes: 4 }
        );
        assert_eq!(replay(&[], 4, 2, Deal::Even), PackingCost::default());
    }

    /// 2 lanes, chains 4, 1, 1, 1, 1 of one level in groups of 2: the groups cost 4 + 1 + 1
    /// steps; refilled, one lane runs the 4 while the other runs the four 1s: 4 steps. A hit
    /// after the fourth chain makes two runs: 4 (4 | 1, 1, 1) and 1.
    #[test]
    fn refill_balances_a_level() {
        let mut groups = vec![group(&[4, 1], 2), group(&[1, 1], 2), group(&[1], 1)];
        assert_eq!(replay(&[&groups], 2, 1, Deal::OldestFirst).lane_steps, 6);
        assert_eq!(
            refill_within_level(&[&groups], 2),
            PackingCost { rounds: 1, lane_steps: 4, pops: 8, busy_lanes: 5 }
        );
        groups[1].barrier = true;
        assert_eq!(refill_within_level(&[&groups], 2).lane_steps, 5);
        // Another level after the first group ends the run too: 4 + max(1 | 1, 1) = 6.
        groups[1].barrier = false;
        groups[1].level = 2;
        groups[2].level = 2;
        assert_eq!(refill_within_level(&[&groups], 2).lane_steps, 4 + 2);
    }

    #[test]
    fn overhead_counts_per_round() {
        let cost = PackingCost { rounds: 3, lane_steps: 11, pops: 20, busy_lanes: 11 };
        assert_eq!(cost.steps(2), 17);
        assert!((cost.utilisation(4, 0) - 20.0 / 44.0).abs() < 1e-12);
    }
}
