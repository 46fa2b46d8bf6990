//! bwa's search for one read by a group of lanes (a GPU warp): the model of `inexact_level` in
//! cuda/inexact_match.cu, which searches the reads whose search is long (repeat families,
//! satellites: up to millions of pops) so that their time is not one thread's chain of
//! memory lookups. Checked against bwa's own search on the CPU (`bcuda-dev stack-profile`, tests).
//!
//! Why it gives bwa's answer: bwa pops its lowest score first, and every child scores more
//! than its parent except the one that matches the read's next base, which bwa pushes last and
//! so pops at once. So when the search reaches a score, the entries of that score are all
//! there, and each is the start of a *chain* (the entry, its matching child, that child's
//! matching child, ...) whose other children all go to higher scores. The chains are popped
//! last in first out; they do not depend on each other except through the hits they find (a
//! hit narrows the D array, and the first hit sets the differences allowed and the last
//! score bwa pops). So the lanes run the next chains of the level at once, each collecting its
//! pushes; the chains before the first one that ends in a hit are committed in bwa's order,
//! that hit is recorded, and the chains after it run again with the new state. Hits are rare
//! next to pops, so little work is repeated.
//!
//! Memory: the entries of each score live in chunks of [`CHUNK`] entries from a fixed pool.
//! Before a group's pushes are stored, the chunks they may need are reserved; if the pool is
//! short, the highest scores are dropped (counted for `-m`, as in [`super::stack::BoundedStack`])
//! and the search is exact as long as it never needs them.

use super::stack::Entry;
use super::{n_stacks, AfterHit, HitList, Search, Step, Width};
use crate::sai::{AlnHit, GapOptions};

/// Entries per chunk of the pool.
pub const CHUNK: usize = 64;

/// Why a level search gave up (the read goes to a larger pass, or the CPU).
#[derive(Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The search needs entries its pool dropped.
    StackFull,
    /// bwa's `-m` limit may be reached inside a group of chains, and the search does not
    /// find the pop (without `exact_entries_limit`; the CPU, which stops exactly there,
    /// takes the read).
    EntriesLimit,
}

/// One lane's chain: its pops, the children it pushed in order (all scoring more than the
/// level) and how many at each pop, and the hit it ended in, if any.
struct ChainRun {
    pops: usize,
    pushes: Vec<Entry>,
    pushes_at: Vec<usize>,
    hit: Option<(u64, u64, Entry)>,
}

fn run_chain(search: &Search, start: Entry, max_diff: i32, width: &[Width]) -> ChainRun {
    let (mut e, mut pushes, mut pushes_at) = (start, Vec::new(), Vec::new());
    loop {
        let before = pushes.len();
        let step = search.step(&e, max_diff, width, &mut |child| pushes.push(child));
        pushes_at.push(pushes.len() - before);
        let pops = pushes_at.len();
        match step {
            Step::Done | Step::Expanded(None) => return ChainRun { pops, pushes, pushes_at, hit: None },
            Step::Hit(k, l) => return ChainRun { pops, pushes, pushes_at, hit: Some((k, l, e)) },
            Step::Expanded(Some(child)) => e = child,
        }
    }
}

/// One pop of `e`: its run, and its matching child when it has one.
fn pop_once(search: &Search, e: Entry, max_diff: i32, width: &[Width]) -> (ChainRun, Option<Entry>) {
    let mut pushes = Vec::new();
    let step = search.step(&e, max_diff, width, &mut |child| pushes.push(child));
    let pushes_at = vec![pushes.len()];
    let (hit, next) = match step {
        Step::Hit(k, l) => (Some((k, l, e)), None),
        Step::Expanded(next) => (None, next),
        Step::Done => (None, None),
    };
    (ChainRun { pops: 1, pushes, pushes_at, hit }, next)
}

/// Whether the root's chain may run on all lanes at once: bwa's `-m` cannot stop it there
/// (a pop pushes at most 9 entries), so no pop of it needs the count of entries before it.
pub fn root_chain_fits(len: usize, max_entries: i32) -> bool {
    i64::from(max_entries) > 9 * (len as i64 + 1) + 1
}

/// Whether bwa's `-m` (`max_entries`) stops the search inside a group of chains that start
/// with `n_entries` entries on bwa's stack: bwa checks the count before every pop, and a pop
/// takes one entry and adds its children, the matching one included (popped next), so the
/// count before each pop follows from the pushes at each pop of the chains in order.
fn entries_limit_inside(runs: &[ChainRun], n_entries: usize, max_entries: usize) -> bool {
    let mut n = n_entries;
    for run in runs {
        for (p, &pushed) in run.pushes_at.iter().enumerate() {
            if n > max_entries {
                return true;
            }
            n = n - 1 + pushed + usize::from(p + 1 < run.pops);
        }
    }
    false
}

/// The entries of each score in push order, in a pool of `chunks` chunks.
struct Levels {
    buckets: Vec<Vec<Entry>>,
    free_chunks: usize,
    /// Highest score stored; every dropped entry scores more.
    cap: usize,
    stored: usize,
    dropped: usize,
}

impl Levels {
    fn chunks_of(len: usize) -> usize {
        len.div_ceil(CHUNK)
    }

    /// Drops the entries of every score above `cap`, freeing their chunks.
    fn lower_cap(&mut self, cap: usize) {
        for b in cap + 1..=self.cap.min(self.buckets.len() - 1) {
            let len = self.buckets[b].len();
            self.free_chunks += Self::chunks_of(len);
            self.stored -= len;
            self.dropped += len;
            self.buckets[b].clear();
        }
        self.cap = self.cap.min(cap);
    }

    /// Stores a group's pushes (in order) while the current level is `level`: first makes room
    /// for them, dropping the highest scores if the pool is short.
    fn commit(&mut self, level: usize, pushes: &[&[Entry]]) {
        // Chunks the pushes may need: whole chunks for them, plus one part-filled chunk per
        // score (as the GPU reserves them, without counting per score).
        let need = pushes.iter().map(|p| p.len()).sum::<usize>().div_ceil(CHUNK) + self.buckets.len();
        while self.free_chunks < need && self.cap > level {
            match (level + 1..=self.cap).rev().find(|&b| !self.buckets[b].is_empty()) {
                Some(highest) => self.lower_cap(highest - 1),
                None => self.lower_cap(level),
            }
        }
        for e in pushes.iter().flat_map(|p| p.iter()) {
            let s = e.score();
            if s > self.cap {
                self.dropped += 1;
                continue;
            }
            let before = Self::chunks_of(self.buckets[s].len());
            self.buckets[s].push(*e);
            self.free_chunks -= Self::chunks_of(self.buckets[s].len()) - before;
            self.stored += 1;
        }
    }
}

/// What a level search cost: pops by all lanes (chains run again after a hit included), the
/// pops on its critical path (per group of chains, its longest chain), and the groups (the
/// rounds that `level_max_rounds` counts on the GPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelCost {
    pub pops: usize,
    pub critical_pops: usize,
    pub groups: usize,
}

/// One group of chains as the level search ran it: each chain's pops in bwa's order, and how
/// many of the chains were committed. The chains after the committed ones (after a hit, or
/// after the root chain's end) ran with the state before the hit and are run again by the
/// next group, or not at all when the search ends there. Chain lengths depend only on the
/// read's state, which changes only at a hit, so a group split over several rounds of fewer
/// lanes keeps them (`bcuda-dev stack-profile --warp-reads` replays groups that way).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupTrace {
    pub chain_pops: Vec<u32>,
    pub committed: usize,
    /// The score of its chains' entries (0 for the root chain).
    pub level: usize,
    /// Its last committed chain ended in a hit, or is the root chain's last pop: the chains
    /// after it see another state (or are another level's).
    pub barrier: bool,
}

/// Where a level search counts its groups: always its [`LevelCost`], and each group's shape
/// when a trace is asked for.
struct Tally<'a> {
    cost: &'a mut LevelCost,
    trace: Option<&'a mut Vec<GroupTrace>>,
}

impl Tally<'_> {
    fn group(
        &mut self,
        chain_pops: impl Iterator<Item = usize> + Clone,
        committed: usize,
        level: usize,
        barrier: bool,
    ) {
        self.cost.pops += chain_pops.clone().sum::<usize>();
        self.cost.critical_pops += chain_pops.clone().max().unwrap_or(0);
        self.cost.groups += 1;
        if let Some(trace) = self.trace.as_deref_mut() {
            let chain_pops = chain_pops.map(|p| u32::try_from(p).unwrap_or(u32::MAX)).collect();
            trace.push(GroupTrace { chain_pops, committed, level, barrier });
        }
    }
}

/// Records a group's hit (its last run's, if any); `true` when it ends the search.
fn record_group_hit(
    run: Option<&ChainRun>,
    found: &mut HitList,
    levels: &mut Levels,
    level: usize,
    search: &Search,
    width: &mut [Width],
) -> bool {
    let Some((k, l, e)) = run.and_then(|r| r.hit) else { return false };
    match found.record(&e, k, l, width, search.bwt.seq_len(), search.opt) {
        AfterHit::Go => false,
        AfterHit::FirstHit(last_score) => {
            levels.lower_cap((last_score.max(0) as usize).max(level));
            false
        }
        AfterHit::Stop => true,
    }
}

/// The root's chain on all lanes at once (`inexact_level` with `root_chain`): its intervals
/// are known before the search ([`Search::root_intervals`]), so lane `j` of a round pops the
/// chain's entry at depth `base + j`. The pops up to the first that does not lead on (no
/// matching child, a hit, pruned) are the chain's: committed in order, as the chain's pushes
/// would be. `true` when a hit ends the search there.
fn root_chain(
    search: &Search,
    width: &mut [Width],
    levels: &mut Levels,
    found: &mut HitList,
    lanes: usize,
    tally: &mut Tally,
) -> bool {
    let entries: Vec<Entry> =
        search.root_intervals().iter().enumerate().map(|(d, &(k, l))| search.root_chain_entry(d, k, l)).collect();
    for base in (0..entries.len()).step_by(lanes) {
        let pops: Vec<(ChainRun, Option<Entry>)> = entries[base..entries.len().min(base + lanes)]
            .iter()
            .map(|&e| pop_once(search, e, found.max_diff, width))
            .collect();
        let end = pops.iter().position(|(_, next)| next.is_none());
        let committed = end.map_or(pops.len(), |j| j + 1);
        tally.group(pops.iter().map(|(run, _)| run.pops), committed, 0, end.is_some());
        for (j, (_, next)) in pops[..committed].iter().enumerate() {
            if let Some(child) = next {
                let d = base + j + 1;
                assert_eq!(Some(child), entries.get(d), "the root chain's matching child at depth {d}");
            }
        }
        let runs: Vec<&ChainRun> = pops[..committed].iter().map(|(run, _)| run).collect();
        let pushes: Vec<&[Entry]> = runs.iter().map(|r| &r.pushes[..]).collect();
        levels.commit(0, &pushes);
        if end.is_some() {
            return record_group_hit(runs.last().copied(), found, levels, 0, search, width);
        }
    }
    unreachable!("the root's chain ends by its last depth (a hit or no matching child)")
}

/// The level search's variants (the kernels' switches of the same names).
#[derive(Clone, Copy, Debug, Default)]
pub struct LevelFlags {
    /// A group of chains within reach of bwa's `-m` is walked pop by pop to find where bwa
    /// stops, instead of giving the read up.
    pub exact_entries_limit: bool,
    /// The root's chain runs on all lanes at once ([`root_chain`]).
    pub root_chain: bool,
}

/// bwa's search of one read (as [`super::align_read_with`], after the D arrays) by
/// `lanes` lanes with a pool of `chunks` chunks, in the variant `flags` says; its groups of
/// chains go to `trace` when one is given.
#[allow(clippy::too_many_arguments)] // the search, its read's state, the team's shape and what it counts
pub fn level_search(
    search: &Search,
    width: &mut [Width],
    batch_opt: &GapOptions,
    lanes: usize,
    chunks: usize,
    flags: LevelFlags,
    cost: &mut LevelCost,
    trace: Option<&mut Vec<GroupTrace>>,
) -> Result<Vec<AlnHit>, GiveUp> {
    let opt = search.opt;
    let mut tally = Tally { cost, trace };
    let mut found = HitList::new(opt);
    if search.too_many_ns(found.max_diff) {
        return Ok(found.hits);
    }
    let n = n_stacks(batch_opt);
    let mut levels = Levels { buckets: vec![Vec::new(); n], free_chunks: chunks, cap: n - 1, stored: 0, dropped: 0 };
    if flags.root_chain && root_chain_fits(search.seq.len(), opt.max_entries) {
        if root_chain(search, width, &mut levels, &mut found, lanes, &mut tally) {
            return Ok(found.hits);
        }
    } else {
        levels.commit(0, &[&[search.root()]]);
    }
    loop {
        let Some(level) = (0..=levels.cap).find(|&b| !levels.buckets[b].is_empty()) else {
            if levels.dropped == 0 || found.ends_before(levels.cap as i32 + 1, opt) {
                break;
            }
            return Err(GiveUp::StackFull);
        };
        if levels.stored + levels.dropped > opt.max_entries as usize || found.ends_before(level as i32, opt) {
            break;
        }
        // The level's chains, last pushed first: its chunks go back to the pool as they empty.
        let chains: Vec<Entry> = levels.buckets[level].iter().rev().copied().collect();
        let mut held_chunks = Levels::chunks_of(chains.len());
        let mut next = 0;
        while next < chains.len() {
            let group = &chains[next..chains.len().min(next + lanes)];
            let runs: Vec<ChainRun> = group.iter().map(|&c| run_chain(search, c, found.max_diff, width)).collect();
            let committed = runs.iter().position(|r| r.hit.is_some()).map_or(runs.len(), |h| h + 1);
            tally.group(runs.iter().map(|r| r.pops), committed, level, runs[committed - 1].hit.is_some());
            let runs = &runs[..committed];
            // bwa checks -m before every pop: only a group that may reach it needs a look.
            let n_entries = levels.stored + levels.dropped;
            let most = n_entries + runs.iter().map(|r| r.pushes.len()).sum::<usize>() + 1;
            if most > opt.max_entries as usize {
                if !flags.exact_entries_limit {
                    return Err(GiveUp::EntriesLimit);
                }
                // bwa stops before a pop of this group: the hits so far are its answer (the
                // group's own hit, at its last pop, comes after that stop).
                if entries_limit_inside(runs, n_entries, opt.max_entries as usize) {
                    return Ok(found.hits);
                }
            }
            let pushes: Vec<&[Entry]> = runs.iter().map(|r| &r.pushes[..]).collect();
            levels.commit(level, &pushes);
            levels.stored -= committed;
            next += committed;
            let needed_chunks = Levels::chunks_of(chains.len() - next);
            levels.free_chunks += held_chunks - needed_chunks;
            held_chunks = needed_chunks;
            if record_group_hit(runs.last(), &mut found, &mut levels, level, search, width) {
                return Ok(found.hits);
            }
        }
        levels.free_chunks += held_chunks;
        levels.buckets[level].clear();
    }
    Ok(found.hits)
}
