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
//! next to pops, so little work is repeated. With [`RefillSegments`] the chains run in
//! segments of any size instead of groups of one per lane: every committed chain still ran
//! with the state after every hit of the chains before it, so the hits cannot depend on where
//! segments end. A segment runs only where its pushes cannot take bwa's stack past `-m`; from
//! the first that might, the level goes on in groups, which find where `-m` stops.
//!
//! Memory (`level_pool`): the entries of each score live in chunks of [`CHUNK`] items from a
//! fixed pool. Before a group's (or segment's) pushes are stored, the chunks they may need are
//! reserved; if the pool is short, the highest scores are dropped (counted for `-m`, as in
//! [`super::stack::BoundedStack`]) and the search is exact as long as it never needs them.

use super::level_pool::{by_pop, gap_children, items_of, Levels};
use super::stack::Entry;
use super::{n_stacks, AfterHit, HitList, Search, Step, Width, STATE_M};
use crate::sai::{AlnHit, GapOptions};

pub use super::level_pool::CHUNK;

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

/// What a level search cost: pops by all lanes (chains run again after a hit included), the
/// pops on its critical path (per group of chains, its longest chain; per segment, the lanes'
/// last to finish), and the groups or segments (the rounds that `level_max_rounds` counts on
/// the GPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelCost {
    pub pops: usize,
    pub critical_pops: usize,
    pub groups: usize,
    /// The pushes that groups of chains committed, and how many of them lay beyond each of
    /// [`PUSH_WINDOWS`] in their lane's buffer (a lane runs one chain a group): what a window of
    /// each lane's first pushes in shared memory would leave to global memory.
    pub pushes: usize,
    pub pushes_past: [usize; PUSH_WINDOWS.len()],
    /// Of those pushes, the gap children (insertions and deletions), and the pushes by score:
    /// bwa never pops an entry above its last score (`best_score + s_mm`), so these say how
    /// many of the stored entries only ever count towards `-m`.
    pub gap_pushes: usize,
    pub pushes_by_score: ScoreCounts,
    /// The committed pops that pushed gap children: one record a pop (its entry, the gap's
    /// kind and which children exist) would stand for all of them.
    pub gap_pops: usize,
    /// The pushes above the pool's cap when their group began (the cap falls to
    /// `best_score + s_mm` at the first hit, and when the pool is short): the commit drops
    /// them, so a lane could count them at the push instead of storing them.
    pub pushes_above_cap: usize,
    /// With [`LevelFlags::gap_records`]: the records stored, and those the search expanded
    /// (each costs the GPU a lookup of its parent's interval).
    pub records: usize,
    pub records_expanded: usize,
    /// How the segments ended ([`RefillSegments`]; none without it).
    pub segment_ends: SegmentEnds,
}

/// Windows of a lane's first pushes whose overflow [`LevelCost`] counts.
pub const PUSH_WINDOWS: [usize; 3] = [4, 8, 16];

/// Counts per score, the last band holding every score from `SCORE_BANDS - 1` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreCounts(pub [u32; ScoreCounts::BANDS]);

impl ScoreCounts {
    pub const BANDS: usize = 64;

    fn add(&mut self, score: usize) {
        self.0[score.min(Self::BANDS - 1)] += 1;
    }

    /// How many scored more than `score` (exact for a score below the last band).
    pub fn above(&self, score: usize) -> u64 {
        self.0.iter().skip(score.saturating_add(1)).map(|&n| u64::from(n)).sum()
    }
}

impl Default for ScoreCounts {
    fn default() -> ScoreCounts {
        ScoreCounts([0; Self::BANDS])
    }
}

/// How many segments of chains ended each way ([`RefillSegments`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentEnds {
    /// At their drawn most chains, or at the level's last chain.
    pub cap: usize,
    /// At a chain that ended in a hit (committed, the segment's last).
    pub hit: usize,
    /// At a chain whose pushes did not fit a lane's buffer (it and the chains after it run
    /// again in the next segment).
    pub buffer_full: usize,
    /// Levels that went on in groups, from their first segment whose pushes might take bwa's
    /// stack past `-m` to their end (groups find the pop where bwa stops).
    pub levels_in_groups: usize,
}

/// A round of a level's chains, all run with the state at its start: the runs it commits in
/// bwa's order (only the last may end in a hit), and what it cost.
struct Round {
    runs: Vec<ChainRun>,
    /// The pops of each chain the round ran, in bwa's order: the committed ones, then (in a
    /// group) those after its hit, which run again.
    chain_pops: Vec<usize>,
    critical_pops: usize,
}

impl Round {
    /// A segment's committed `runs`, all of the chains it counts.
    fn segment(runs: Vec<ChainRun>, critical_pops: usize) -> Round {
        Round { chain_pops: runs.iter().map(|r| r.pops).collect(), critical_pops, runs }
    }
}

/// A group of the level's next `lanes` chains (at most): the chains up to the first that
/// ends in a hit are committed, the rest run again.
fn run_group(search: &Search, chains: &[Entry], max_diff: i32, width: &[Width], lanes: usize) -> Round {
    let mut runs: Vec<ChainRun> =
        chains[..chains.len().min(lanes)].iter().map(|&c| run_chain(search, c, max_diff, width)).collect();
    let chain_pops: Vec<usize> = runs.iter().map(|r| r.pops).collect();
    let critical_pops = chain_pops.iter().copied().max().unwrap_or(0);
    let committed = runs.iter().position(|r| r.hit.is_some()).map_or(runs.len(), |h| h + 1);
    runs.truncate(committed);
    Round { runs, chain_pops, critical_pops }
}

/// The GPU's segments of chains (`level_refill`): lanes take the level's next chain as soon as
/// their own ends, up to `4 x lanes` chains a segment; a segment ends at its first chain that
/// ends in a hit (committed, its last), or where a lane's push buffer fills inside a chain
/// (that chain and the ones after it are not committed; a segment's first chain always fits).
/// Where each segment ends is drawn from `seed` (and the read), not from the lanes' timing and
/// buffers, so that a check over many draws shows bwa's hits do not depend on it.
#[derive(Clone, Copy, Debug)]
pub struct RefillSegments {
    pub seed: u64,
}

impl RefillSegments {
    /// The draws for one read: a stream of its own for each read and seed (an FNV-1a hash of
    /// the read mixed into the seed by splitmix64's finalizer, so that neighbouring seeds and
    /// reads that differ by a base draw unrelated ends).
    fn draws(self, seq: &[u8]) -> impl FnMut() -> u64 {
        let read = seq.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3));
        let mut z = (self.seed ^ read).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        super::seeded::xorshift((z ^ (z >> 31)).max(1))
    }
}

/// Entries of a lane's push buffer for a read of `len` bases: one chain's pushes, at most 9 a
/// pop over at most `len + 1` pops.
pub fn lane_buffer_entries(len: usize) -> usize {
    9 * (len + 1)
}

/// Whether a round of `lanes` lanes (a segment, or a group) that starts with `n_entries`
/// entries on bwa's stack cannot take it past `max_entries` (bwa's `-m`, checked before every
/// pop): its pushes are at most its lanes' buffers, so no pop of it needs the count of
/// entries before it.
fn buffers_fit_under_m(n_entries: usize, lanes: usize, len: usize, max_entries: i32) -> bool {
    let most_pushed = lanes * lane_buffer_entries(len);
    (n_entries + most_pushed + 1) as u64 <= max_entries.max(0) as u64
}

/// A segment of the level's next chains: its most chains drawn between 1 and `4 x lanes`, and
/// in a third of the segments of more than one chain, a lane's buffer full inside a drawn
/// chain after the first. Each chain goes to the lane that is free first; a chain ends the
/// segment uncommitted where its lane's buffer (of [`lane_buffer_entries`]) would lack room
/// for a pop's 9 pushes, as on the GPU (a segment's first chain always fits). Its critical
/// path is that of its lanes. (The chains after its end that lanes had taken also run on
/// the GPU; the model counts only the committed ones.)
fn run_segment(
    search: &Search,
    chains: &[Entry],
    max_diff: i32,
    width: &[Width],
    lanes: usize,
    draw: &mut impl FnMut() -> u64,
    ends: &mut SegmentEnds,
) -> Round {
    use std::cmp::Reverse;
    let cap = chains.len().min(1 + (draw() % (4 * lanes) as u64) as usize);
    let buffer_full_at = (cap > 1 && draw().is_multiple_of(3)).then(|| 1 + (draw() % (cap - 1) as u64) as usize);
    let buffer = lane_buffer_entries(search.seq.len());
    // Lanes by the pop-step they are free at, and the entries in each one's buffer.
    let mut free: std::collections::BinaryHeap<Reverse<(usize, usize)>> = (0..lanes).map(|j| Reverse((0, j))).collect();
    let mut buffered = vec![0; lanes];
    let (mut runs, mut critical_pops) = (Vec::new(), 0);
    for (i, &c) in chains[..cap].iter().enumerate() {
        let run = (buffer_full_at != Some(i)).then(|| run_chain(search, c, max_diff, width));
        let Reverse((start, lane)) = free.pop().expect("a lane");
        // The lane checks for room for 9 pushes before each pop, its chain's last included.
        let Some(run) = run.filter(|r| buffered[lane] + r.pushes.len() - r.pushes_at[r.pops - 1] + 9 <= buffer) else {
            assert!(i > 0, "a segment's first chain fits an empty buffer");
            ends.buffer_full += 1;
            return Round::segment(runs, critical_pops);
        };
        buffered[lane] += run.pushes.len();
        critical_pops = critical_pops.max(start + run.pops);
        free.push(Reverse((start + run.pops, lane)));
        let hit = run.hit.is_some();
        runs.push(run);
        if hit {
            ends.hit += 1;
            return Round::segment(runs, critical_pops);
        }
    }
    ends.cap += 1;
    Round::segment(runs, critical_pops)
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

/// Where a level search counts its rounds (groups of chains, or segments): always its
/// [`LevelCost`], and each group's shape when a trace is asked for.
struct Tally<'a> {
    cost: &'a mut LevelCost,
    trace: Option<&'a mut Vec<GroupTrace>>,
}

impl Tally<'_> {
    /// A round whose lanes ran chains of `chain_pops` pops over `critical_pops` pop-steps: a
    /// segment, counted but not traced.
    fn segment(&mut self, chain_pops: &[usize], critical_pops: usize) {
        self.cost.pops += chain_pops.iter().sum::<usize>();
        self.cost.critical_pops += critical_pops;
        self.cost.groups += 1;
    }

    /// A group's committed runs' pushes, and those past each window of a lane's buffer.
    fn pushes(&mut self, runs: &[ChainRun], cap: usize) {
        for run in runs {
            self.cost.pushes += run.pushes.len();
            for (past, window) in self.cost.pushes_past.iter_mut().zip(PUSH_WINDOWS) {
                *past += run.pushes.len().saturating_sub(window);
            }
            for e in &run.pushes {
                self.cost.gap_pushes += usize::from(e.state != STATE_M);
                self.cost.pushes_above_cap += usize::from(e.score() > cap);
                self.cost.pushes_by_score.add(e.score());
            }
            self.cost.gap_pops += by_pop(&run.pushes, &run.pushes_at).filter(|pop| gap_children(pop) > 0).count();
        }
    }

    /// A group whose lanes ran chains of `chain_pops` pops over `critical_pops` pop-steps and
    /// committed the first `committed` of them.
    fn round(&mut self, chain_pops: &[usize], critical_pops: usize, committed: usize, level: usize, barrier: bool) {
        self.segment(chain_pops, critical_pops);
        if let Some(trace) = self.trace.as_deref_mut() {
            let chain_pops = chain_pops.iter().map(|&p| u32::try_from(p).unwrap_or(u32::MAX)).collect();
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
    (lanes, records): (usize, bool),
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
        let chain_pops: Vec<usize> = pops.iter().map(|(run, _)| run.pops).collect();
        let critical_pops = chain_pops.iter().copied().max().unwrap_or(0);
        tally.round(&chain_pops, critical_pops, committed, 0, end.is_some());
        for (j, (_, next)) in pops[..committed].iter().enumerate() {
            if let Some(child) = next {
                let d = base + j + 1;
                assert_eq!(Some(child), entries.get(d), "the root chain's matching child at depth {d}");
            }
        }
        let runs: Vec<&ChainRun> = pops[..committed].iter().map(|(run, _)| run).collect();
        let items: Vec<_> = runs.iter().map(|r| items_of(&r.pushes, &r.pushes_at, records)).collect();
        levels.commit(0, items);
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
    /// The level's chains run in segments (`level_refill`) instead of groups of `lanes`, each
    /// level's until the next segment's pushes might take bwa's stack past `-m`: from there
    /// the level goes on in groups (which find where `-m` stops, or give the read up, as
    /// `exact_entries_limit` says), and the next level starts with segments again.
    pub refill: Option<RefillSegments>,
    /// In a group that cannot reach `-m`, the pushes above the pool's cap are counted as
    /// dropped instead of stored (the GPU's `drop_at_push`: its lanes do not store them, so
    /// the commit makes room only for the others).
    pub drop_at_push: bool,
    /// Each pop's gap children are stored as one record, expanded into them only when the
    /// search reaches their score (the GPU's `gap_records`, expanded in `expand_level`: what
    /// it stores, and that bwa's order survives it).
    pub gap_records: bool,
}

/// bwa's search of one read (as [`super::align_read_with`], after the D arrays) by
/// `lanes` lanes with a pool of `chunks` chunks, in the variant `flags` says; its groups of
/// chains go to `trace` when one is given. With [`LevelFlags::refill`] only the groups of
/// levels that went on in groups near `-m` go to `trace`, not the segments: a segment's
/// lanes take chains as their own end, which a [`GroupTrace`] (chains dealt `lanes` at a
/// time) does not describe.
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
    let mut levels = Levels::new(n_stacks(batch_opt), chunks);
    let done = search_levels(search, width, (lanes, flags), &mut levels, &mut found, &mut tally);
    tally.cost.records += levels.records;
    tally.cost.records_expanded += levels.expanded;
    done.map(|()| found.hits)
}

/// The level search's loop over its levels, from the root (or the root's chain) on; `Ok` once
/// it has bwa's hits in `found`.
fn search_levels(
    search: &Search,
    width: &mut [Width],
    (lanes, flags): (usize, LevelFlags),
    levels: &mut Levels,
    found: &mut HitList,
    tally: &mut Tally,
) -> Result<(), GiveUp> {
    let opt = search.opt;
    if flags.root_chain && root_chain_fits(search.seq.len(), opt.max_entries) {
        if root_chain(search, width, levels, found, (lanes, flags.gap_records), tally) {
            return Ok(());
        }
    } else {
        levels.commit(0, vec![items_of(&[search.root()], &[1], false)]);
    }
    let mut draw = flags.refill.map(|r| r.draws(search.seq));
    loop {
        let Some(level) = levels.lowest() else {
            if levels.dropped == 0 || found.ends_before(levels.cap as i32 + 1, opt) {
                break;
            }
            return Err(GiveUp::StackFull);
        };
        if levels.stored + levels.dropped > opt.max_entries as usize || found.ends_before(level as i32, opt) {
            break;
        }
        // The level's chains, last pushed first: its chunks go back to the pool as they empty.
        let Some(chains) = levels.open(level) else { return Err(GiveUp::StackFull) };
        let mut held_chunks = Levels::chunks_of(chains.len());
        let (mut next, mut segments) = (0, draw.as_mut());
        while next < chains.len() {
            let n_entries = levels.stored + levels.dropped;
            if segments.is_some() && !buffers_fit_under_m(n_entries, lanes, search.seq.len(), opt.max_entries) {
                segments = None;
                tally.cost.segment_ends.levels_in_groups += 1;
            }
            let round = match segments.as_mut() {
                Some(draw) => {
                    let ends = &mut tally.cost.segment_ends;
                    run_segment(search, &chains[next..], found.max_diff, width, lanes, draw, ends)
                }
                None => run_group(search, &chains[next..], found.max_diff, width, lanes),
            };
            let (runs, committed) = (&round.runs[..], round.runs.len());
            let barrier = runs.last().is_some_and(|r| r.hit.is_some());
            match segments {
                Some(_) => tally.segment(&round.chain_pops, round.critical_pops),
                None => {
                    tally.round(&round.chain_pops, round.critical_pops, committed, level, barrier);
                    tally.pushes(runs, levels.cap);
                }
            }
            // bwa checks -m before every pop: only a group that may reach it needs a look (a
            // segment ran only where it cannot).
            let most = n_entries + runs.iter().map(|r| r.pushes.len()).sum::<usize>() + 1;
            if most > opt.max_entries as usize {
                assert!(segments.is_none(), "a segment's pushes fit its lanes' buffers, which bwa's -m left room for");
                if !flags.exact_entries_limit {
                    return Err(GiveUp::EntriesLimit);
                }
                // bwa stops before a pop of this group: the hits so far are its answer (the
                // group's own hit, at its last pop, comes after that stop).
                if entries_limit_inside(runs, n_entries, opt.max_entries as usize) {
                    return Ok(());
                }
            }
            let drop_at_push = flags.drop_at_push
                && segments.is_none()
                && buffers_fit_under_m(n_entries, lanes, search.seq.len(), opt.max_entries);
            let items: Vec<_> = runs
                .iter()
                .map(|r| {
                    let items = items_of(&r.pushes, &r.pushes_at, flags.gap_records);
                    if drop_at_push {
                        levels.count_above_cap(items)
                    } else {
                        items
                    }
                })
                .collect();
            levels.commit(level, items);
            levels.stored -= committed;
            next += committed;
            let needed_chunks = Levels::chunks_of(chains.len() - next);
            levels.free_chunks += held_chunks - needed_chunks;
            held_chunks = needed_chunks;
            if record_group_hit(runs.last(), found, levels, level, search, width) {
                return Ok(());
            }
        }
        levels.free_chunks += held_chunks;
        levels.close(level);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::aln_options::batch_options;
    use crate::search::seeded::{both_strands, genome_with_repeats, indexed, read_with_edits, xorshift};
    use crate::search::stack::GapStack;
    use crate::search::{align_read_with, prepare_read, ReadBuffers};

    /// The level search of `read` as `bcuda-dev stack-profile` runs it, its groups of chains in
    /// `trace` when one is given.
    fn level_traced(
        bwt: &bcuda_index::Bwt,
        read: &[u8],
        opt: &GapOptions,
        (lanes, chunks): (usize, usize),
        flags: LevelFlags,
        cost: &mut LevelCost,
        trace: Option<&mut Vec<GroupTrace>>,
    ) -> Result<Vec<AlnHit>, GiveUp> {
        let mut buffers = ReadBuffers::default();
        let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
        let ReadBuffers { width, seed_width, seq } = &mut buffers;
        let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
        level_search(&search, width, opt, lanes, chunks, flags, cost, trace)
    }

    /// The pushes that groups commit are the chains' own, run with bwa's state: the same
    /// whatever the lanes (the chains after a group's hit run again, uncounted), and fewer past
    /// each larger window of a lane's buffer.
    #[test]
    fn committed_pushes_do_not_depend_on_the_lanes() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let genome = genome_with_repeats(20_000, 1000..1600, &[5000, 9000, 13_000], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        let text = both_strands(&genome);
        let (mut past_a_window, mut reads_with_pushes, mut gap_pushes) = (0, 0, 0);
        for r in 0..60 {
            let len = 30 + (next() % 70) as usize;
            let read = read_with_edits(&text, len, r % 5 == 0, 7, &mut next);
            let opt = batch_options(&GapOptions::default(), read.len());
            let costs: Vec<LevelCost> = [1, 4, 32]
                .iter()
                .map(|&lanes| {
                    let mut cost = LevelCost::default();
                    level_traced(&bwt, &read, &opt, (lanes, 1 << 14), LevelFlags::default(), &mut cost, None).unwrap();
                    cost
                })
                .collect();
            for c in &costs[1..] {
                let what = |c: &LevelCost| {
                    (c.pushes, c.pushes_past, c.gap_pushes, c.gap_pops, c.pushes_by_score, c.pushes_above_cap)
                };
                assert_eq!(what(c), what(&costs[0]), "read {r} {read:?}");
            }
            let c = costs[0];
            assert!(c.pushes >= c.pushes_past[0] && c.pushes_past.windows(2).all(|w| w[0] >= w[1]), "{c:?}");
            assert!(c.gap_pops <= c.gap_pushes && c.gap_pushes <= c.pushes, "{c:?}");
            assert_eq!(c.pushes_by_score.above(0), c.pushes as u64, "{c:?}");
            gap_pushes += c.gap_pushes;
            reads_with_pushes += usize::from(c.pushes > 0);
            past_a_window += usize::from(c.pushes_past[0] > 0);
        }
        assert!(reads_with_pushes > 30 && past_a_window > 0 && gap_pushes > 0, "{reads_with_pushes} {past_a_window}");
    }

    /// The genome the level search's checks share: 20 kbp with repeat families at four places,
    /// indexed in a directory of its own (kept while its index is read), its text on both
    /// strands, and the generator, seeded with `seed`, that drew it (the reads are drawn next).
    fn repeat_families(seed: u64) -> (tempfile::TempDir, bcuda_index::Bwt, Vec<u8>, impl FnMut() -> u64) {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(seed);
        let genome = genome_with_repeats(20_000, 1000..1600, &[5000, 9000, 13_000, 17_000], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        (dir, bwt, both_strands(&genome), next)
    }

    /// One read of [`for_each_case`] under one shape of the search, with bwa's hits.
    struct Case<'a> {
        bwt: &'a bcuda_index::Bwt,
        read: &'a [u8],
        opt: GapOptions,
        shape: (usize, usize),
        bwa: Vec<AlnHit>,
        name: String,
    }

    impl Case<'_> {
        /// The level search of the case with `flags`, its groups of chains in `trace`.
        fn run(
            &self,
            flags: LevelFlags,
            cost: &mut LevelCost,
            trace: Option<&mut Vec<GroupTrace>>,
        ) -> Result<Vec<AlnHit>, GiveUp> {
            level_traced(self.bwt, self.read, &self.opt, self.shape, flags, cost, trace)
        }
    }

    /// 120 reads (from 30 to 80 bases, a sixth from the repeat families) of a genome with
    /// repeats, each under each `(lanes, chunks, -m)` of [`SHAPES`]: large pools, pools small
    /// enough to drop scores and hand reads on, and a `-m` near enough that groups store every
    /// push for the exact `-m` rule.
    fn for_each_case(seed: u64, mut check: impl FnMut(&Case)) {
        let (_dir, bwt, text, mut next) = repeat_families(seed);
        for r in 0..120 {
            let len = 30 + (next() % 50) as usize;
            let read = read_with_edits(&text, len, r % 6 == 0, 7, &mut next);
            for (lanes, chunks, max_entries) in SHAPES {
                let opt = batch_options(&GapOptions { max_entries, ..GapOptions::default() }, read.len());
                let bwa =
                    align_read_with(&bwt, None, &read, &opt, &mut GapStack::default(), &mut ReadBuffers::default())
                        .expect("bwa's stack holds every entry");
                let name = format!("read {r} {read:?}, {lanes} lanes, {chunks} chunks, -m {max_entries}");
                check(&Case { bwt: &bwt, read: &read, opt, shape: (lanes, chunks), bwa, name });
            }
        }
    }

    const SHAPES: [(usize, usize, i32); 4] =
        [(32, 1 << 14, 2_000_000), (32, 40, 2_000_000), (4, 20, 2_000_000), (8, 1 << 14, 150)];

    /// Tallies a case's outcome: bwa's hits where it finished (`[finished, handed on]`).
    fn tally_outcome(case: &Case, done: Result<Vec<AlnHit>, GiveUp>, flags: LevelFlags, outcomes: &mut [usize; 2]) {
        match done {
            Ok(hits) => {
                assert_eq!(hits, case.bwa, "{}, {flags:?}", case.name);
                outcomes[0] += 1;
            }
            Err(GiveUp::StackFull) => outcomes[1] += 1,
            Err(GiveUp::EntriesLimit) => panic!("exact_entries_limit finds where -m stops"),
        }
    }

    /// Pushes above the cap counted at the push (`drop_at_push`) give bwa's hits in every case;
    /// and as the commit makes room only for the pushes it keeps, small pools hand on no more
    /// reads than without.
    #[test]
    fn drop_at_push_gives_bwas_hits() {
        let (mut outcomes, mut above_cap) = ([[0; 2]; 2], 0);
        for_each_case(0x9e37_79b9_7f4a_7c15, |case| {
            for drop_at_push in [false, true] {
                let flags = LevelFlags { drop_at_push, exact_entries_limit: true, ..LevelFlags::default() };
                let mut cost = LevelCost::default();
                tally_outcome(case, case.run(flags, &mut cost, None), flags, &mut outcomes[drop_at_push as usize]);
                above_cap += usize::from(drop_at_push) * cost.pushes_above_cap;
            }
        });
        let [without, with] = outcomes;
        assert!(above_cap > 0 && without[1] > 0, "{above_cap} {without:?}");
        assert!(with[1] <= without[1] && with[0] >= without[0], "{outcomes:?}");
    }

    /// Gap records (each pop's gap children stored as one, expanded when the search reaches
    /// their score) give bwa's hits in every case, with the root's chain and with
    /// `drop_at_push`; where the pool holds everything, the very groups of chains, in the same
    /// order, as without them. Most records are never expanded.
    #[test]
    fn gap_records_give_bwas_hits() {
        let (mut outcomes, mut records, mut expanded) = ([0; 2], 0, 0);
        for_each_case(0xd1b5_4a32_d192_ed03, |case| {
            for (root_chain, drop_at_push) in [(false, false), (true, false), (true, true)] {
                let flags =
                    LevelFlags { gap_records: true, root_chain, drop_at_push, exact_entries_limit: true, refill: None };
                let (mut cost, mut trace) = (LevelCost::default(), Vec::new());
                let done = case.run(flags, &mut cost, Some(&mut trace));
                if case.shape.1 == 1 << 14 {
                    let plain = LevelFlags { gap_records: false, ..flags };
                    let mut plain_trace = Vec::new();
                    let without = case.run(plain, &mut LevelCost::default(), Some(&mut plain_trace));
                    assert_eq!(done, without, "{}, {flags:?}", case.name);
                    assert!(trace == plain_trace, "{}, {flags:?}: other groups of chains", case.name);
                }
                tally_outcome(case, done, flags, &mut outcomes);
                assert!(cost.records_expanded <= cost.records, "{cost:?}");
                (records, expanded) = (records + cost.records, expanded + cost.records_expanded);
            }
        });
        assert!(outcomes[0] > 1000 && outcomes[1] > 0, "{outcomes:?}");
        assert!(expanded > 0 && expanded * 2 < records, "{expanded} of {records}");
    }

    /// The team passes one after the other, as the GPU runs them (src/gpu/inexact.rs, `plan`):
    /// a read whose pool is short starts again in the next pass, with larger teams and pools.
    /// Pools small enough that pass 2 hands reads to a middle pass of teams of 128 and it hands
    /// some on to the last give bwa's hits for every read, whichever pass finishes it.
    #[test]
    fn passes_of_growing_teams_give_bwas_hits() {
        let (_dir, bwt, text, mut next) = repeat_families(0x2f4a_9c1e_07b3_5d61);
        let flags = LevelFlags {
            gap_records: true,
            root_chain: true,
            drop_at_push: true,
            exact_entries_limit: true,
            refill: None,
        };
        let passes = [(32, 48), (128, 64), (1024, 1 << 14)];
        let mut finished_by = [0; 3];
        for r in 0..150 {
            let len = 30 + (next() % 60) as usize;
            let read = read_with_edits(&text, len, r % 4 == 0, 7, &mut next);
            let opt = batch_options(&GapOptions::default(), read.len());
            let bwa = align_read_with(&bwt, None, &read, &opt, &mut GapStack::default(), &mut ReadBuffers::default())
                .expect("bwa's stack holds every entry");
            let finished = passes.iter().enumerate().find_map(|(p, &shape)| {
                let done = level_traced(&bwt, &read, &opt, shape, flags, &mut LevelCost::default(), None);
                match done {
                    Ok(hits) => Some((p, hits)),
                    Err(GiveUp::StackFull) => None,
                    Err(GiveUp::EntriesLimit) => panic!("exact_entries_limit finds where -m stops"),
                }
            });
            let (p, hits) = finished.unwrap_or_else(|| panic!("read {r}: the last pass's pool holds bwa's -m"));
            assert_eq!(hits, bwa, "read {r} {read:?}, finished by pass {}", p + 2);
            finished_by[p] += 1;
        }
        assert!(finished_by.iter().all(|&n| n > 0), "reads finished by passes 2, middle, last: {finished_by:?}");
    }

    /// Segments of chains (`level_refill`) give bwa's hits wherever they end: each seed ends
    /// them elsewhere (at drawn caps, at hits and at full buffers, all of which happen here),
    /// with one lane and with many, with pools small enough to drop scores, and with a `-m`
    /// small enough that levels go on in groups near it: from their first chain where one
    /// lane's segments already ran (`-m` 800), and from their start (`-m` 150, below one
    /// segment's room), groups either finding where `-m` stops or giving the read up.
    #[test]
    fn segments_give_bwas_hits_wherever_they_end() {
        let (_dir, bwt, text, mut next) = repeat_families(0x5851_f42d_4c95_7f2d);
        let mut ends = SegmentEnds::default();
        let (mut finished, mut dropped_and_handed_on, mut gave_up_for_m) = (0, 0, 0);
        // Searches that finished after going on in groups, and of those, after segments too.
        let (mut finished_in_groups, mut finished_after_segments) = (0, 0);
        for r in 0..120 {
            let len = 30 + (next() % 50) as usize;
            let read = read_with_edits(&text, len, r % 6 == 0, 7, &mut next);
            for (lanes, chunks, max_entries, exact_entries_limit) in [
                (1, 1 << 14, 2_000_000, false),
                (4, 40, 2_000_000, false),
                (32, 1 << 14, 2_000_000, false),
                (32, 40, 2_000_000, false),
                (1, 1 << 14, 800, true),
                (1, 40, 800, false),
                (8, 1 << 14, 150, true),
                (8, 1 << 14, 150, false),
            ] {
                let opt = batch_options(&GapOptions { max_entries, ..GapOptions::default() }, read.len());
                let bwa =
                    align_read_with(&bwt, None, &read, &opt, &mut GapStack::default(), &mut ReadBuffers::default())
                        .expect("bwa's stack holds every entry");
                for seed in 1..=4 {
                    let refill = Some(RefillSegments { seed });
                    let flags = LevelFlags { refill, exact_entries_limit, ..LevelFlags::default() };
                    let mut cost = LevelCost::default();
                    match level_traced(&bwt, &read, &opt, (lanes, chunks), flags, &mut cost, None) {
                        Ok(hits) => {
                            let case = format!("read {r} {read:?}, {lanes} lanes, {chunks} chunks, -m {max_entries}");
                            assert_eq!(hits, bwa, "{case}, seed {seed}");
                            finished += 1;
                            let e = cost.segment_ends;
                            finished_in_groups += usize::from(e.levels_in_groups > 0);
                            finished_after_segments += usize::from(e.levels_in_groups > 0 && e.cap + e.hit > 0);
                        }
                        Err(GiveUp::StackFull) => dropped_and_handed_on += 1,
                        Err(GiveUp::EntriesLimit) if !exact_entries_limit => gave_up_for_m += 1,
                        Err(GiveUp::EntriesLimit) => panic!("exact_entries_limit finds where -m stops"),
                    }
                    let e = cost.segment_ends;
                    (ends.cap, ends.hit, ends.buffer_full, ends.levels_in_groups) = (
                        ends.cap + e.cap,
                        ends.hit + e.hit,
                        ends.buffer_full + e.buffer_full,
                        ends.levels_in_groups + e.levels_in_groups,
                    );
                }
            }
        }
        assert!(ends.cap > 0 && ends.hit > 0 && ends.buffer_full > 0 && ends.levels_in_groups > 0, "{ends:?}");
        assert!(
            finished > 1000 && dropped_and_handed_on > 0 && gave_up_for_m > 0,
            "{finished} {dropped_and_handed_on} {gave_up_for_m}"
        );
        assert!(
            finished_in_groups > 0 && finished_after_segments > 0,
            "{finished_in_groups} {finished_after_segments}"
        );
    }
}
