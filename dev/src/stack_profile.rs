//! `bcuda-dev stack-profile`: how much stack bwa's search needs per read, and whether the GPU's
//! bounded stack ([`BoundedStack`]) of a given size gives bwa's hits. Every read is searched
//! with bwa's stack (the oracle) and with bounded stacks of each size; a bounded search either
//! gives the oracle's hits exactly or says the stack was too small, and any other outcome is
//! an error. This is the CPU check of the GPU's stack policy, and the numbers that size it.

use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda_index::IntervalTable;

use crate::aln_flags::{profile_reads, AlnFlags};
use bcuda::sai::GapOptions;
use bcuda::search::level_search::{
    level_search, GiveUp, GroupTrace, LevelCost, LevelFlags, RefillSegments, CHUNK, PUSH_WINDOWS,
};
use bcuda::search::stack::{BoundedStack, Entry, GapStack, Next, SearchStack, StackState};
use bcuda::search::{align_read_with, prepare_read, ReadBuffers, Search};

#[derive(clap::Args, Debug)]
pub struct StackProfileArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    /// Bounded stack sizes (entries) to check, comma-separated.
    #[arg(long, default_value = "256,1024,2048,8192,32768", value_delimiter = ',')]
    pub capacity: Vec<usize>,
    /// Pop budget of the bounded stacks (the GPU's first pass hands longer searches on).
    #[arg(long, default_value_t = usize::MAX)]
    pub max_pops: usize,
    /// Pool sizes (entries) of the level search to check, comma-separated.
    #[arg(long, default_value = "65536,2000000", value_delimiter = ',')]
    pub level_capacity: Vec<usize>,
    /// Lanes of the level search's team (pass 2 runs 32, pass 3 `last_team_lanes`).
    #[arg(long, default_value_t = 32)]
    pub lanes: usize,
    /// Lanes of the last pool's level search, when it stands for pass 3 (`last_team_lanes`,
    /// 1024); default `--lanes`.
    #[arg(long)]
    pub last_lanes: Option<usize>,
    #[command(flatten)]
    pub aln: AlnFlags,
    /// The level search finds where bwa's `-m` stops a group of chains instead of giving up.
    #[arg(long)]
    pub exact_entries_limit: bool,
    /// The level search runs the root's chain on all its lanes at once, from the chain's
    /// intervals known before the search (the kernels' `root_chain`).
    #[arg(long)]
    pub root_chain: bool,
    /// Pushes above the pool's cap counted as dropped instead of stored, in groups that cannot
    /// reach `-m` (the kernels' `drop_at_push`).
    #[arg(long)]
    pub drop_at_push: bool,
    /// Each pop's gap children stored as one record, expanded when the search reaches their
    /// score (the kernels' `gap_records`).
    #[arg(long)]
    pub gap_records: bool,
    /// The level search runs each level's chains in segments (the kernels' `level_refill`)
    /// whose ends are drawn from this seed: at a drawn most chains, at a hit, or at a full
    /// push buffer inside a drawn chain (or a real one); from the first segment whose pushes
    /// might take bwa's stack past `-m`, a level goes on in groups.
    #[arg(long)]
    pub refill: Option<u64>,
    /// Profile at most this many reads.
    #[arg(long)]
    pub max_reads: Option<usize>,
    /// Also write one line per read to this file (TSV): bwa's pops and stack peak, the size of
    /// exact_match's interval (0: none), the root chain's length and weight, the first bounded
    /// stack's pops, entries and lowest score where it gave up (NA where it finished), and per
    /// level-search pool its groups of chains and critical-path pops (NA where it gave up): how
    /// well what the GPU knows before the search, or when pass 1 hands a read on, predicts its
    /// cost.
    #[arg(long)]
    pub per_read: Option<PathBuf>,
    /// The GPU's algorithms take the intervals of strings of fewer bases than this from an
    /// interval table (`IntervalTable`) instead of the BWT, as the GPU does (0: none); bwa's
    /// search, the oracle, never does.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=bcuda_index::interval_table::MAX_DEPTH as i64))]
    pub interval_depth: u32,
    /// Replay the level search's groups of chains (its last pool) on one warp of `--lanes`
    /// lanes serving this many reads at once, comma-separated (dev/src/warp_packing.rs); not
    /// with `--refill`, whose segments are not groups and are not recorded.
    #[arg(long, value_delimiter = ',')]
    pub warp_reads: Vec<usize>,
    /// Commit costs of a round of that replay, in pop-steps, comma-separated.
    #[arg(long, default_value = "0,2,4", value_delimiter = ',')]
    pub warp_overhead: Vec<u64>,
    /// Replay pass 2's launch of a batch on this many teams (the GPU's: its SMs x
    /// `level_warps_per_sm`; an H200's 132 x 16 = 2112) in several queue orders
    /// (dev/src/launch_tail.rs), for each of the reads, weights and passes of `TAIL_CASES`.
    #[arg(long)]
    pub launch_tail: Option<usize>,
    /// Reads per batch for `--launch-tail` (bwa's batch).
    #[arg(long, default_value_t = 262_144)]
    pub batch_reads: usize,
    /// With `--launch-tail` and two pools or more, also replay pass 3's launch on this many
    /// teams (the GPU's SMs): the reads the first pool gives up on and the last finishes, by
    /// what the first pool's search spent before it gave up.
    #[arg(long, default_value_t = 132)]
    pub last_teams: usize,
    /// Check that bwa pops every entry in the order its ancestry gives (dev/src/pop_order.rs)
    /// and count the pops that do not.
    #[arg(long)]
    pub check_pop_order: bool,
    /// Rebuild each read's hits from its candidate paths popped in the ancestry order
    /// (dev/src/replay.rs) and count the reads where they are not bwa's.
    #[arg(long)]
    pub check_replay: bool,
}

/// bwa's stack, counting pops, the pops up to the read's first hit and the most entries held
/// at once.
#[derive(Default)]
pub struct Counting {
    inner: GapStack,
    pub pops: usize,
    pub before_hit: Option<usize>,
    pub peak: usize,
    /// The score of pop number `watch` (1-based; 0 watches none), once popped.
    pub watch: usize,
    pub score_at_watch: Option<i32>,
    last_score: i32,
}

impl Counting {
    fn popped(&mut self) {
        self.pops += 1;
        if self.pops == self.watch {
            self.score_at_watch = Some(self.last_score);
        }
    }
}

impl SearchStack for Counting {
    fn reset(&mut self, n_stacks: usize) {
        self.inner.reset(n_stacks);
        self.pops = 0;
        self.before_hit = None;
        self.peak = 0;
        self.score_at_watch = None;
    }
    fn push(&mut self, e: Entry) {
        self.inner.push(e);
        self.peak = self.peak.max(self.inner.n_entries());
    }
    fn pop(&mut self) -> Next {
        let next = self.inner.pop();
        if let Next::Entry(e) = &next {
            self.last_score = e.score() as i32;
        }
        self.popped();
        next
    }
    /// The held entry is the matching child of the last pop, at its score.
    fn pop_held(&mut self) -> bool {
        self.popped();
        true
    }
    fn n_entries(&self) -> usize {
        self.inner.n_entries()
    }
    /// bwa's search asks this at its first hit: the pops so far found it.
    fn pop_no_more_than(&mut self, _score: i32) {
        self.before_hit.get_or_insert(self.pops);
    }
}

/// One read's profile: bwa's pops and peak entries, and per bounded size `Some(peak stored)`
/// or `None` when that size was too small.
struct ReadProfile {
    /// exact_match's interval size (0: no exact match, or an N).
    exact: u64,
    /// The root chain (the read's exact backward search as the search runs it), known before
    /// the search: what the GPU knows of every read when pass 1 has given up (aln's rule).
    root: RootChain,
    pops: usize,
    /// bwa's pops up to and including the one that found the first hit (all of them without a hit).
    pops_before_hit: usize,
    /// The best hit's score (None: no hit), and the hits bwa reports.
    best: Option<u32>,
    n_hits: usize,
    /// With `--check-pop-order`: bwa's pops out of the ancestry order.
    out_of_order: u64,
    /// With `--check-replay`: whether the replay gave bwa's hits, and the entries on the
    /// candidate paths off the root's chain (None: not replayed).
    replay: Option<(bool, usize)>,
    peak: usize,
    bounded: Vec<Option<usize>>,
    /// The first bounded stack's state where it gave up (None: it finished): what the GPU's
    /// first pass knows of a read it hands on.
    handed_on: Option<StackState>,
    /// The level search with each pool size.
    levels: LevelSearches,
}

fn profile_read(
    bwt: &bcuda_index::Bwt,
    intervals: Option<&IntervalTable>,
    read: &[u8],
    opt: &GapOptions,
    args: &StackProfileArgs,
) -> Result<ReadProfile> {
    let capacities = &args.capacity;
    let mut buffers = ReadBuffers::default();
    let mut oracle = Counting::default();
    let hits = align_read_with(bwt, None, read, opt, &mut oracle, &mut buffers).expect("bwa's stack holds every entry");
    let mut bounded = Vec::new();
    let mut handed_on = None;
    for &capacity in capacities {
        let mut stack = BoundedStack::with_max_pops(capacity, args.max_pops);
        let found = align_read_with(bwt, intervals, read, opt, &mut stack, &mut buffers);
        if found.is_err() && bounded.is_empty() {
            handed_on = Some(stack.state());
        }
        bounded.push(match found {
            Ok(h) if h == hits => Some(stack.peak_stored),
            Ok(h) => {
                bail!(
                    "a bounded stack of {capacity} entries gave {} hits where bwa's gives {}: {h:?} vs {hits:?}",
                    h.len(),
                    hits.len()
                )
            }
            Err(_) => None,
        });
    }
    let levels = level_searches(bwt, intervals, read, opt, &hits, args)?;
    let exact =
        crate::gpu_bench::exact_search(bwt, read).map_or(0, |(k, l)| if k == 0 && l == 0 { 0 } else { l + 1 - k });
    let root = root_chain(bwt, read, opt);
    let pops_before_hit = oracle.before_hit.unwrap_or(oracle.pops);
    let best = hits.iter().map(|h| h.score).min();
    let out_of_order = if args.check_pop_order { pops_out_of_order(bwt, read, opt, &hits)? } else { 0 };
    let replay = if args.check_replay && oracle.peak < opt.max_entries as usize {
        replay_matches(bwt, read, opt, best, &hits)
    } else {
        None
    };
    Ok(ReadProfile {
        exact,
        pops: oracle.pops,
        pops_before_hit,
        best,
        n_hits: hits.len(),
        out_of_order,
        replay,
        peak: oracle.peak,
        bounded,
        handed_on,
        levels,
        root,
    })
}

/// The level search of one read with each pool size of `--level-capacity`.
struct LevelSearches {
    /// Per pool size: its cost, or why it gave up.
    level: Vec<Result<LevelCost, GiveUp>>,
    /// Per pool size, the cost spent up to the end or to where it gave up: what a team pass
    /// knows of a read it hands on.
    level_spent: Vec<LevelCost>,
    /// The groups of chains of the last pool's level search (when `--warp-reads` asks).
    groups: Vec<GroupTrace>,
}

fn level_searches(
    bwt: &bcuda_index::Bwt,
    intervals: Option<&IntervalTable>,
    read: &[u8],
    opt: &GapOptions,
    hits: &[bcuda::sai::AlnHit],
    args: &StackProfileArgs,
) -> Result<LevelSearches> {
    let mut buffers = ReadBuffers::default();
    let mut out = LevelSearches { level: Vec::new(), level_spent: Vec::new(), groups: Vec::new() };
    for (c, &capacity) in args.level_capacity.iter().enumerate() {
        let trace = (!args.warp_reads.is_empty() && c + 1 == args.level_capacity.len()).then_some(&mut out.groups);
        let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
        let ReadBuffers { width, seed_width, seq } = &mut buffers;
        let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals };
        let mut cost = LevelCost::default();
        let flags = LevelFlags {
            exact_entries_limit: args.exact_entries_limit,
            root_chain: args.root_chain,
            drop_at_push: args.drop_at_push,
            gap_records: args.gap_records,
            refill: args.refill.map(|seed| RefillSegments { seed }),
        };
        let last = c + 1 == args.level_capacity.len();
        let lanes = if last { args.last_lanes.unwrap_or(args.lanes) } else { args.lanes };
        let found = level_search(&search, width, opt, lanes, capacity / CHUNK, flags, &mut cost, trace);
        out.level.push(match found {
            Ok(h) if h == hits => Ok(cost),
            Ok(h) => {
                bail!(
                    "the level search with {capacity} entries gave {} hits where bwa's gives {}: {h:?} vs {hits:?}",
                    h.len(),
                    hits.len()
                )
            }
            Err(why) => Err(why),
        });
        out.level_spent.push(cost);
    }
    Ok(out)
}

/// What a read's root chain says of it: the bases it matches, and its weight as read_widths
/// gives it to the team passes' order (`level_order`): the sum of floor(log2) of its intervals'
/// rows after each base, which says how long the read stays in repeats.
#[derive(Clone, Copy, Debug, Default)]
struct RootChain {
    len: usize,
    weight: u64,
}

fn root_chain(bwt: &bcuda_index::Bwt, read: &[u8], opt: &GapOptions) -> RootChain {
    let mut buffers = ReadBuffers::default();
    let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
    let ReadBuffers { seed_width, seq, .. } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
    let chain = search.root_intervals();
    let weight = chain[1..].iter().map(|&(k, l)| (l + 1 - k).ilog2() as u64).sum();
    RootChain { len: chain.len() - 1, weight }
}

/// Whether the hits replayed from the read's candidate paths are bwa's, and the entries on
/// those paths off the root's chain (None: too many paths).
fn replay_matches(
    bwt: &bcuda_index::Bwt,
    read: &[u8],
    opt: &GapOptions,
    best: Option<u32>,
    hits: &[bcuda::sai::AlnHit],
) -> Option<(bool, usize)> {
    let mut buffers = ReadBuffers::default();
    let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
    let (replayed, entries) = crate::replay::replayed_hits(&search, width, &local, best, 2_000_000)?;
    Some((replayed == hits, entries))
}

/// bwa's pops of `read` that do not come in the order their ancestries give.
fn pops_out_of_order(
    bwt: &bcuda_index::Bwt,
    read: &[u8],
    opt: &GapOptions,
    hits: &[bcuda::sai::AlnHit],
) -> Result<u64> {
    let mut checked = crate::pop_order::OrderChecked::default();
    let mut buffers = ReadBuffers::default();
    let again =
        align_read_with(bwt, None, read, opt, &mut checked, &mut buffers).expect("bwa's stack holds every entry");
    if again != hits {
        bail!("bwa's stack beside the ancestry check gave other hits");
    }
    Ok(checked.out_of_order)
}

fn write_per_read(path: &std::path::Path, profiles: &[ReadProfile], level_capacities: &[usize]) -> Result<()> {
    use std::io::Write;
    let mut out = bcuda_output::Output::file(path)?;
    write!(out, "read\tpops\tpops_before_hit\tbest\thits\tpeak\texact_interval\troot_len\troot_weight")?;
    write!(out, "\tpass1_pops\tpass1_entries\tpass1_best")?;
    for c in level_capacities {
        write!(out, "\tgroups_{c}\tcritical_pops_{c}")?;
    }
    writeln!(out)?;
    for (i, p) in profiles.iter().enumerate() {
        let best = p.best.map_or("NA".to_string(), |b| b.to_string());
        write!(out, "{i}\t{}\t{}\t{best}\t{}\t{}\t{}", p.pops, p.pops_before_hit, p.n_hits, p.peak, p.exact)?;
        write!(out, "\t{}\t{}", p.root.len, p.root.weight)?;
        match p.handed_on {
            Some(s) => write!(out, "\t{}\t{}\t{}", s.pops, s.entries, s.best)?,
            None => write!(out, "\tNA\tNA\tNA")?,
        }
        for level in &p.levels.level {
            match level {
                Ok(cost) => write!(out, "\t{}\t{}", cost.groups, cost.critical_pops)?,
                Err(_) => write!(out, "\tNA\tNA")?,
            }
        }
        writeln!(out)?;
    }
    out.commit()?;
    Ok(())
}

/// One launch `--launch-tail` replays: the pass, the reads that reach it with their cost there
/// and weight, and what the weight is.
struct TailCase {
    pass: &'static str,
    weight: &'static str,
    last_pass: bool,
    read: fn(&ReadProfile) -> Option<crate::launch_tail::PassRead>,
}

/// The launches `--launch-tail` replays. Pass 2 gets the reads pass 1's first bounded stack
/// hands on, or, once aln's rule has made pass 1 give up (as it does on large genomes), every
/// read; a read costs it what the first pool's search spent, to its end or to where it gave
/// up. Pass 3 (with two pools or more) gets the reads the first pool gives up on, at what the
/// last pool's search spent.
const TAIL_CASES: [TailCase; 5] = [
    TailCase {
        pass: "pass 2",
        weight: "pass 1's stack entries",
        last_pass: false,
        read: |p| Some(tail_read(p.levels.level_spent.first()?, p.handed_on?.entries)),
    },
    TailCase {
        pass: "pass 2",
        weight: "the root chain's",
        last_pass: false,
        read: |p| {
            p.handed_on?;
            Some(tail_read(p.levels.level_spent.first()?, p.root.weight as usize))
        },
    },
    TailCase {
        pass: "pass 2 after aln's rule (every read)",
        weight: "the root chain's",
        last_pass: false,
        read: |p| Some(tail_read(p.levels.level_spent.first()?, p.root.weight as usize)),
    },
    TailCase {
        pass: "pass 3",
        weight: "the root chain's",
        last_pass: true,
        read: |p| {
            p.levels.level.first()?.as_ref().err()?;
            Some(tail_read(p.levels.level_spent.last()?, p.root.weight as usize))
        },
    },
    TailCase {
        pass: "pass 3",
        weight: "pass 2's groups of chains",
        last_pass: true,
        read: |p| {
            p.levels.level.first()?.as_ref().err()?;
            Some(tail_read(p.levels.level_spent.last()?, p.levels.level_spent.first()?.groups))
        },
    },
];

/// A read at the critical-path pops a level search spent.
fn tail_read(spent: &LevelCost, weight: usize) -> crate::launch_tail::PassRead {
    crate::launch_tail::PassRead { cost: spent.critical_pops as u64, weight: weight as u64 }
}

/// `--launch-tail`: each of [`TAIL_CASES`], pass 3's with two pools or more.
fn print_launch_tails(profiles: &[ReadProfile], teams: usize, args: &StackProfileArgs) {
    for case in TAIL_CASES.iter().filter(|c| !c.last_pass || args.level_capacity.len() > 1) {
        let reads: Vec<_> = profiles.iter().filter_map(case.read).filter(|r| r.cost > 0).collect();
        let teams = if case.last_pass { args.last_teams } else { teams };
        let launch = crate::launch_tail::Launch { pass: case.pass, weight: case.weight, teams };
        crate::launch_tail::print(&launch, &reads, profiles.len(), args.batch_reads);
    }
}

/// How the segments of the searches that finished ended, and how many of their levels went on
/// in groups near `-m`, per pool.
fn print_segment_ends(profiles: &[ReadProfile], level_capacities: &[usize], seed: u64) {
    println!(
        "level_refill segments (seed {seed}) entries\tended at their cap\tat a hit\tat a full buffer\t\
         levels finished in groups near -m"
    );
    for (c, &capacity) in level_capacities.iter().enumerate() {
        let ends = profiles.iter().filter_map(|p| p.levels.level[c].as_ref().ok()).map(|x| x.segment_ends);
        let (cap, hit, full, groups) = ends
            .fold((0, 0, 0, 0), |(a, b, f, g), e| (a + e.cap, b + e.hit, f + e.buffer_full, g + e.levels_in_groups));
        println!("{capacity}\t{cap}\t{hit}\t{full}\t{groups}");
    }
}

/// bwa's pops in all and up to each read's first hit, then the same by the reads' best score.
fn print_pops_by_best(profiles: &[ReadProfile]) {
    let all: usize = profiles.iter().map(|p| p.pops).sum();
    let before: usize = profiles.iter().map(|p| p.pops_before_hit).sum();
    let share = |x: usize| 100.0 * x as f64 / all.max(1) as f64;
    println!("pops in all: {all}, up to the read's first hit: {before} ({:.1} %)", share(before));
    let mut by_best: std::collections::BTreeMap<Option<u32>, (usize, usize, usize)> = Default::default();
    for p in profiles {
        let row = by_best.entry(p.best).or_default();
        *row = (row.0 + 1, row.1 + p.pops, row.2 + p.pops_before_hit);
    }
    println!("best score\treads\tpops (share of all)\tup to the first hit (share of all)");
    for (best, (reads, pops, before)) in by_best {
        let best = best.map_or("no hit".to_string(), |s| s.to_string());
        println!("{best}\t{reads}\t{pops} ({:.1} %)\t{before} ({:.1} %)", share(pops), share(before));
    }
}

pub fn percentile(sorted: &[usize], p: f64) -> usize {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0)
}

pub fn run(args: StackProfileArgs) -> Result<()> {
    if args.refill.is_some() && !args.warp_reads.is_empty() {
        bail!(
            "--warp-reads replays the level search's groups of chains; with --refill it runs segments, \
             which it does not record: give one or the other"
        );
    }
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let opt = args.aln.gap_options()?;
    let intervals = (args.interval_depth > 0).then(|| IntervalTable::build(&bwt, args.interval_depth));
    let profiles = profile_reads(&args.reads, args.max_reads, &opt, |read, opt| {
        profile_read(&bwt, intervals.as_ref(), read, opt, &args)
    })?;
    let n = profiles.len();
    if let Some(path) = &args.per_read {
        write_per_read(path, &profiles, &args.level_capacity)?;
    }
    let mut pops: Vec<usize> = profiles.iter().map(|p| p.pops).collect();
    let mut peaks: Vec<usize> = profiles.iter().map(|p| p.peak).collect();
    pops.sort_unstable();
    peaks.sort_unstable();
    println!("{n} reads; every bounded search that finished gave bwa's hits");
    println!("percentile\tpops\tbwa stack peak");
    for p in [0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
        println!("{}\t{}\t{}", p * 100.0, percentile(&pops, p), percentile(&peaks, p));
    }
    print_pops_by_best(&profiles);
    if args.check_pop_order {
        let out: u64 = profiles.iter().map(|p| p.out_of_order).sum();
        let reads = profiles.iter().filter(|p| p.out_of_order > 0).count();
        println!("pop order: {out} of bwa's pops out of the order their ancestries give, in {reads} reads");
    }
    if args.check_replay {
        let count = |want: Option<bool>| profiles.iter().filter(|p| p.replay.map(|r| r.0) == want).count();
        let replayed = profiles.iter().filter(|p| p.replay.is_some());
        let (entries, pops) = replayed.fold((0, 0), |(e, q), p| (e + p.replay.map_or(0, |r| r.1), q + p.pops));
        println!(
            "replay: {} reads gave bwa's hits, {} did not, {} not replayed (bwa's -m, or over 2M paths); \
             entries on their candidate paths off the root's chain: {entries} against bwa's {pops} pops",
            count(Some(true)),
            count(Some(false)),
            count(None)
        );
    }
    if std::env::var_os("BCUDA_PROFILE_TOP").is_some() {
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by_key(|&i| std::cmp::Reverse(profiles[i].pops));
        for &i in idx.iter().take(20) {
            println!("read {i}: pops {} peak {}", profiles[i].pops, profiles[i].peak);
        }
    }
    println!("bounded entries\treads too large\tpops of those\tpeak stored (p99 of the rest)");
    for (c, &capacity) in args.capacity.iter().enumerate() {
        let over: Vec<&ReadProfile> = profiles.iter().filter(|p| p.bounded[c].is_none()).collect();
        let mut stored: Vec<usize> = profiles.iter().filter_map(|p| p.bounded[c]).collect();
        stored.sort_unstable();
        let over_pops: usize = over.iter().map(|p| p.pops).sum();
        println!("{capacity}\t{}\t{over_pops}\t{}", over.len(), percentile(&stored, 0.99));
    }
    println!(
        "level search ({} lanes) entries\tgave up: stack\tgave up: -m\tpops\tcritical-path pops\tthe same for reads of over 10k pops",
        args.lanes
    );
    for (c, &capacity) in args.level_capacity.iter().enumerate() {
        let stack = profiles.iter().filter(|p| p.levels.level[c] == Err(GiveUp::StackFull)).count();
        let limit = profiles.iter().filter(|p| p.levels.level[c] == Err(GiveUp::EntriesLimit)).count();
        let done: Vec<(&ReadProfile, LevelCost)> =
            profiles.iter().filter_map(|p| p.levels.level[c].as_ref().ok().map(|&x| (p, x))).collect();
        let sum = |heavy: bool, f: fn(&LevelCost) -> usize| {
            done.iter().filter(|(p, _)| !heavy || p.pops > 10_000).map(|(_, x)| f(x)).sum::<usize>()
        };
        println!(
            "{capacity}\t{stack}\t{limit}\t{}\t{}\t{} / {} (bwa's pops {})",
            sum(false, |x| x.pops),
            sum(false, |x| x.critical_pops),
            sum(true, |x| x.pops),
            sum(true, |x| x.critical_pops),
            done.iter().filter(|(p, _)| p.pops > 10_000).map(|(p, _)| p.pops).sum::<usize>()
        );
    }
    print_push_windows(&profiles, &args.level_capacity, &opt);
    if let Some(teams) = args.launch_tail {
        print_launch_tails(&profiles, teams, &args);
    }
    if let Some(seed) = args.refill {
        print_segment_ends(&profiles, &args.level_capacity, seed);
    }
    // Pass 2's `level_max_rounds` hands a read on after that many rounds (groups of chains, or
    // segments with `--refill`): how many reads each value would hand on, and their share of
    // the critical path (the largest pool, where the fewest searches give up, so that their
    // rounds are counted to the end).
    if let Some(last) = args.level_capacity.len().checked_sub(1) {
        let costs: Vec<LevelCost> =
            profiles.iter().filter_map(|p| p.levels.level[last].as_ref().ok().copied()).collect();
        let mut groups: Vec<usize> = costs.iter().map(|x| x.groups).collect();
        groups.sort_unstable();
        let all_critical = costs.iter().map(|x| x.critical_pops).sum::<usize>().max(1);
        let (pool, p) = (args.level_capacity[last], |q| percentile(&groups, q));
        println!(
            "{} of chains per read (level search, {} lanes, pool {pool}): p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
            if args.refill.is_some() { "segments" } else { "groups" },
            args.lanes,
            p(0.5),
            p(0.9),
            p(0.99),
            p(0.999),
            p(1.0)
        );
        println!("level_max_rounds\treads over it\ttheir critical-path pops (share)");
        let domain =
            bcuda::gpu::InexactSwitches::DOMAINS.iter().find(|d| d.0 == "level_max_rounds").map_or(&[][..], |d| d.1);
        for &rounds in domain.iter().filter(|&&r| r > 0) {
            let rounds = rounds as usize;
            let over: Vec<&LevelCost> = costs.iter().filter(|x| x.groups > rounds).collect();
            let critical = over.iter().map(|x| x.critical_pops).sum::<usize>();
            println!("{rounds}\t{}\t{critical} ({:.1} %)", over.len(), 100.0 * critical as f64 / all_critical as f64);
        }
    }
    if !args.warp_reads.is_empty() {
        print_warp_packing(&profiles, &args)?;
    }
    Ok(())
}

/// Of the pushes that groups commit, the gap children and those bwa never pops: above the
/// read's last score, `best_score + s_mm` (every push of a read without a hit, or with `-N`,
/// may be popped).
fn print_never_popped(profiles: &[ReadProfile], last: usize, pushes: usize, opt: &GapOptions) {
    let (mut gaps, mut gap_pops, mut above_cap, mut never) = (0, 0, 0, 0);
    let (mut records, mut expanded) = (0, 0);
    let nonstop = opt.mode & bcuda::sai::MODE_NONSTOP != 0;
    for p in profiles {
        let Ok(cost) = &p.levels.level[last] else { continue };
        records += cost.records;
        expanded += cost.records_expanded;
        gaps += cost.gap_pushes;
        gap_pops += cost.gap_pops;
        above_cap += cost.pushes_above_cap;
        if let (Some(best), false) = (p.best, nonstop) {
            never += cost.pushes_by_score.above(best as usize + opt.s_mm as usize);
        }
    }
    let share = |n: u64| 100.0 * n as f64 / pushes.max(1) as f64;
    println!(
        "of the pushes committed by groups of chains: gap children {:.1} %, above bwa's last score (best + s_mm, never popped) {:.1} %, \
         above the pool's cap when their group began (dropped by the commit) {:.1} %",
        share(gaps as u64),
        share(never),
        share(above_cap as u64)
    );
    println!(
        "pops that pushed gap children: {gap_pops}; a record a pop for them would store {:.1} % of the pushes' entries",
        share((pushes - gaps + gap_pops) as u64)
    );
    if records > 0 {
        println!(
            "gap records stored: {records}; expanded: {expanded} ({:.1} %)",
            100.0 * expanded as f64 / records as f64
        );
    }
}

/// The pushes that the level search's groups committed (the largest pool's, where the fewest
/// searches give up), and the share of them beyond each window of a lane's first pushes: what
/// such a window in shared memory would still leave pass 2's commit to read from global memory.
fn print_push_windows(profiles: &[ReadProfile], level_capacity: &[usize], opt: &GapOptions) {
    let Some(last) = level_capacity.len().checked_sub(1) else { return };
    let costs: Vec<&LevelCost> = profiles.iter().filter_map(|p| p.levels.level[last].as_ref().ok()).collect();
    let pushes = costs.iter().map(|x| x.pushes).sum::<usize>();
    let shares: Vec<String> = PUSH_WINDOWS
        .iter()
        .enumerate()
        .map(|(j, w)| {
            let past = costs.iter().map(|x| x.pushes_past[j]).sum::<usize>();
            format!("{w}: {:.1} %", 100.0 * past as f64 / pushes.max(1) as f64)
        })
        .collect();
    println!(
        "pushes committed by groups of chains (pool {}): {pushes}; beyond a lane's first {}",
        level_capacity[last],
        shares.join(", ")
    );
    print_never_popped(profiles, last, pushes, opt);
}

/// The replay of the level search's groups with several reads a warp, for every read, for the
/// reads pass 1 hands on (those the first bounded stack, `--capacity`'s first size with
/// `--max-pops`, does not finish) and for the reads of over 10k pops.
fn print_warp_packing(profiles: &[ReadProfile], args: &StackProfileArgs) -> Result<()> {
    let pool = args.level_capacity.last().copied().unwrap_or(0);
    // The replay of one read a warp must cost what the search counted (every read's groups).
    let counted: usize =
        profiles.iter().filter_map(|p| p.levels.level.last()?.as_ref().ok()).map(|x| x.critical_pops).sum();
    let gave_up: usize = profiles.iter().filter(|p| p.levels.level.last().is_some_and(|x| x.is_err())).count();
    let all: Vec<&[GroupTrace]> = profiles.iter().map(|p| &p.levels.groups[..]).collect();
    let done: Vec<&[GroupTrace]> = profiles
        .iter()
        .filter(|p| p.levels.level.last().is_some_and(|x| x.is_ok()))
        .map(|p| &p.levels.groups[..])
        .collect();
    let replayed = crate::warp_packing::replay(&done, args.lanes, 1, crate::warp_packing::Deal::OldestFirst);
    if replayed.lane_steps != counted as u64 {
        bail!("one read a warp replays {} pop-steps where the search counted {counted}", replayed.lane_steps);
    }
    println!("\nseveral reads a warp (dev/src/warp_packing.rs): the level search's groups (pool {pool}), replayed");
    println!("{}", crate::warp_packing::ASSUMPTIONS);
    println!("# reads whose search gave up (their groups up to then replayed): {gave_up}");
    let handed_on = |p: &&ReadProfile| p.bounded.first().is_some_and(Option::is_none);
    let pass2: Vec<&[GroupTrace]> = profiles.iter().filter(handed_on).map(|p| &p.levels.groups[..]).collect();
    let heavy: Vec<&[GroupTrace]> = profiles.iter().filter(|p| p.pops > 10_000).map(|p| &p.levels.groups[..]).collect();
    let light: Vec<&[GroupTrace]> =
        profiles.iter().filter(|p| p.pops <= 10_000).map(|p| &p.levels.groups[..]).collect();
    let first = args.capacity.first().map_or("none".to_string(), |c| format!("{c} entries, {} pops", args.max_pops));
    let table = |label: &str, reads: &[&[GroupTrace]]| {
        crate::warp_packing::print_table(label, reads, args.lanes, &args.warp_reads, &args.warp_overhead)
    };
    table("every read", &all);
    table(&format!("reads pass 1 hands on (bounded stack of {first} too small)"), &pass2);
    table("reads of over 10k pops (bwa's)", &heavy);
    table("reads of at most 10k pops (bwa's)", &light);
    Ok(())
}
