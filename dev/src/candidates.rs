//! `bcuda-dev candidates`: bwa's hits from candidate alignments found by pigeonhole searches
//! (src/search/pigeonhole.rs) and replayed in bwa's order (dev/src/replay.rs), against bwa's
//! search, with the cost of each (docs/gpu-search.md, "Candidates from pigeonhole searches").
//!
//! A read's candidates are its alignments within a score budget at bwa's penalties (mismatches
//! only, or with `--gaps` bwa's gaps too), from the least its bounds allow up to
//! `--most-score`. The replay of a budget's candidates gives bwa's hits once they hold every
//! path bwa pops: every path of a score up to the first hit's plus `s_mm`. So the ladder stops
//! at the first budget where that holds (the second at most, once a hit is found); otherwise
//! the read is left to bwa's search, and pays for both.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda_index::Bwt;

use bcuda::sai::{AlnHit, GapOptions, MODE_NONSTOP};
use bcuda::search::level_search::{level_search, LevelCost, LevelFlags, CHUNK};
use bcuda::search::no_hit::{edit_limit, suffix_bounds, Bounds};
use bcuda::search::pigeonhole::{any_within, rounds, within, Budget};
use bcuda::search::replay::{self, CandidateTree};
use bcuda::search::{align_read_with, prepare_read, HitList, ReadBuffers, Search, Width};

use crate::aln_flags::{profile_reads, AlnFlags};
use crate::replay::{candidate_tree, replay};
use crate::stack_profile::{percentile, Counting};

#[derive(clap::Args, Debug)]
pub struct CandidatesArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    #[command(flatten)]
    pub aln: AlnFlags,
    /// The ladder's last score budget: reads whose candidates need more go to bwa's search.
    #[arg(long, default_value_t = 9)]
    pub most_score: u32,
    /// Candidates with insertions and deletions too (bwa's gaps), not only mismatches.
    #[arg(long)]
    pub gaps: bool,
    /// Run bwa's search for this many pops first, as the GPU's first pass does: the reads it
    /// finishes cost their pops, the others that many more, and the ladder starts from what it
    /// learnt (the first hit's score, or the score it reached). 0: none.
    #[arg(long, default_value_t = 0)]
    pub first_pops: usize,
    /// The no-hit proof gives up after this many pairs of lookups (the read goes to bwa's search).
    #[arg(long, default_value_t = 60_000)]
    pub proof_lookups: u64,
    /// Reads that match the genome exactly (exact_match's answer, before any search) go to
    /// bwa's search: the candidates cost them more.
    #[arg(long)]
    pub exact_to_bwa: bool,
    /// Profile at most this many reads.
    #[arg(long)]
    pub max_reads: Option<usize>,
}

/// A warp's lanes, for the critical paths.
const LANES: usize = 32;

/// What the candidates cost one read, in pairs of occurrence lookups (a bwa pop or a replayed
/// step reads two rows' counts; bwa's exact extension after its last difference is counted on
/// neither side): the first pass's pops, the suffix bounds (the prefix bounds are bwa's D
/// array), the pigeonhole searches and the replay.
#[derive(Clone, Copy, Default)]
struct Cost {
    first: u64,
    bounds: u64,
    /// Of the bounds' lookups, those of the root's chain.
    root_chain: u64,
    enumeration: u64,
    replay: u64,
    rungs: u64,
    /// Rounds of a warp's 32 lanes: the rungs' searches, and the replays' steps (each waiting
    /// for its parent's).
    search_rounds: u64,
    replay_rounds: u64,
    /// The largest tree of the read's rungs (nodes), and its alignments: what a GPU's replay
    /// would hold per read.
    tree_nodes: usize,
    alignments: usize,
    /// The filtered search (src/search/replay.rs) stepped this many entries, and whether its
    /// hits differed from the sorted replay's on any rung.
    stack_replay_steps: u64,
    stack_replay_differs: bool,
    /// Why the ladder left the read to bwa's search, where it did.
    left_why: Option<&'static str>,
}

impl Cost {
    fn sum(&self) -> u64 {
        self.first + self.bounds + self.enumeration + self.replay
    }

    fn add(&mut self, o: &Cost) {
        self.first += o.first;
        self.bounds += o.bounds;
        self.root_chain += o.root_chain;
        self.search_rounds += o.search_rounds;
        self.replay_rounds += o.replay_rounds;
        self.enumeration += o.enumeration;
        self.replay += o.replay;
        self.rungs += o.rungs;
    }
}

/// How one read was answered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// By bwa's search alone: the first pass finished it, or it matches exactly (`--exact-to-bwa`).
    FirstPass,
    Candidates,
    /// Left to bwa's search after the attempt.
    Bwa,
}

/// One read: bwa's best score and pops, how it was answered and what that cost.
struct ReadCost {
    best: Option<u32>,
    pops: u64,
    /// Whether bwa's stack stayed under `-m` (where it did not, its hits are not compared: the
    /// candidates cannot know where bwa's `-m` stops the search).
    under_m: bool,
    /// For a read the candidates answered, the critical path of the GPU's level search of it
    /// (teams of 32 lanes, the root's chain on all of them), in pops; 0 for the others.
    level_critical: u64,
    answer: Answer,
    cost: Cost,
}

/// bwa's hits from the candidate ladder, starting from a best score of at least `lower`, or
/// None where it cannot tell.
fn candidate_hits(
    search: &Search,
    width: &[Width],
    opt: &GapOptions,
    (args, lower): (&CandidatesArgs, i32),
    cost: &mut Cost,
) -> Option<Vec<AlnHit>> {
    let max_diff = HitList::new(opt).max_diff;
    if search.too_many_ns(max_diff) {
        return Some(Vec::new());
    }
    // The most edits any hit of bwa's holds.
    let limit = if args.gaps { edit_limit(max_diff, opt) } else { max_diff }.max(0);
    let budget = |score: i32| Budget {
        score: score as u32,
        s_mm: opt.s_mm as u32,
        s_gapo: opt.s_gapo as u32,
        s_gape: opt.s_gape as u32,
        max_gapo: if args.gaps { opt.max_gapo.max(0) as u32 } else { 0 },
        max_edits: limit as u32,
    };
    let cheapest = if args.gaps { opt.s_mm.min(opt.s_gapo).min(opt.s_gape) } else { opt.s_mm };
    if opt.mode & MODE_NONSTOP != 0 || max_diff < 1 || cheapest < 1 {
        cost.left_why = Some("options");
        return None;
    }
    let bounds = read_bounds(search, width, cost);
    let fewest = bounds.after[0].max(bounds.before[search.seq.len()]) as i32;
    let mut score = lower.max(fewest * cheapest) + opt.s_mm;
    while score <= args.most_score as i32 {
        cost.left_why = Some("fewer bases than parts");
        let (alignments, lookups, search_rounds) = within(search.bwt, search.seq, budget(score), &bounds, LANES)?;
        cost.left_why = None;
        let tree = candidate_tree(search, &alignments);
        cost.search_rounds += search_rounds;
        cost.replay_rounds += rounds(&tree.waits_for(), LANES);
        if tree.len() > cost.tree_nodes {
            (cost.tree_nodes, cost.alignments) = (tree.len(), alignments.len());
        }
        let r = replay(search, width, opt, &tree, (0..tree.len()).collect());
        // The GPU's form: bwa's search with its stack, filtered by the tree.
        let mut stack_steps = 0;
        let filtered = CandidateTree::new(search.seq, &alignments);
        let hits = replay::replay(search, width, opt, &filtered, &mut stack_steps);
        cost.stack_replay_differs |= hits != r.hits || stack_steps != r.steps as u64;
        cost.stack_replay_steps += stack_steps;
        (cost.enumeration, cost.replay, cost.rungs) =
            (cost.enumeration + lookups / 2, cost.replay + r.steps as u64, cost.rungs + 1);
        // bwa pops every path up to the first hit's score plus s_mm: held where the budget
        // paid for them all (without gaps, where no gap fits under that score either).
        let Some(first) = r.hits.first() else {
            score += opt.s_mm;
            continue;
        };
        let bound = first.score as i32 + opt.s_mm;
        if bound <= score {
            return Some(r.hits);
        }
        if (!args.gaps && bound >= opt.s_gapo) || bound > args.most_score as i32 {
            cost.left_why = Some("a hit, but its score plus a mismatch over --most-score");
            return None;
        }
        score = bound;
    }
    // No hit up to the last budget: where the read has no alignment within its edit limit, bwa
    // has none.
    cost.left_why = Some("no hit up to --most-score: the proof gave up or could not run");
    let none = args.gaps && no_alignment(search, &bounds, limit, (args.proof_lookups, cost))?;
    cost.left_why = (!none).then_some("no hit up to --most-score, but an alignment within the edit limit");
    none.then(Vec::new)
}

/// Whether the read has no alignment within `limit` edits (the no-hit proof of
/// src/search/no_hit.rs, as an enumeration); None where it has too few bases to try or the
/// proof gave up after `most` pairs of lookups.
fn no_alignment(search: &Search, bounds: &Bounds, limit: i32, (most, cost): (u64, &mut Cost)) -> Option<bool> {
    let budget = Budget::edits(limit.max(0) as u32, true);
    let (any, lookups) = any_within(search.bwt, search.seq, budget, bounds, 2 * most);
    cost.enumeration += lookups / 2;
    any.map(|any| !any)
}

/// The read's bounds: the prefixes' are bwa's D array, the suffixes' cost one backward search.
fn read_bounds(search: &Search, width: &[Width], cost: &mut Cost) -> Bounds {
    let mut lookups = 0;
    let len = search.seq.len();
    let after = suffix_bounds(search.bwt, search.seq, &mut lookups);
    let mut before: Vec<u8> = width[..len].iter().map(|w| w.bid.clamp(0, 255) as u8).collect();
    before.insert(0, 0);
    cost.bounds = lookups / 2;
    // The suffixes' first piece is the root's chain, which the GPU's read_widths computes: the
    // suffixes that occur, those no piece fails in.
    let root_chain = after[..len].iter().filter(|&&pieces| pieces == 0).count() as u64;
    cost.root_chain = cost.bounds.min(root_chain);
    Bounds { after, before }
}

fn profile_read(bwt: &Bwt, read: &[u8], opt: &GapOptions, args: &CandidatesArgs) -> Result<ReadCost> {
    let mut buffers = ReadBuffers::default();
    let mut oracle = Counting::default();
    oracle.watch = args.first_pops;
    let hits = align_read_with(bwt, None, read, opt, &mut oracle, &mut buffers).expect("bwa's stack holds every entry");
    let (pops, best) = (oracle.pops as u64, hits.first().map(|h| h.score));
    let mut cost = Cost::default();
    let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
    // exact_match's answer, known before any search: bwa's best is 0 where the read matches.
    let exact = args.exact_to_bwa && search.root_intervals().len() == seq.len() + 1;
    let under_m = oracle.peak < opt.max_entries as usize;
    let read_cost = |answer, cost| ReadCost { best, pops, under_m, level_critical: 0, answer, cost };
    if exact || (args.first_pops > 0 && oracle.pops <= args.first_pops) {
        cost.first = pops;
        return Ok(read_cost(Answer::FirstPass, cost));
    }
    // What a first pass of that many pops learnt: the first hit's score, or that every lower
    // score was popped without a hit.
    let lower = match (args.first_pops, oracle.before_hit) {
        (0, _) => 0,
        (n, Some(at)) if at <= n => best.map_or(0, |b| b as i32),
        _ => oracle.score_at_watch.unwrap_or(0),
    };
    cost.first = args.first_pops as u64;
    let found = candidate_hits(&search, width, &local, (args, lower), &mut cost);
    if cost.stack_replay_differs {
        bail!("the filtered search's hits or steps differ from the sorted replay's");
    }
    match found {
        Some(found) if found != hits && under_m => {
            bail!(
                "the candidates gave {} hits where bwa's search gives {}: {found:?} vs {hits:?}",
                found.len(),
                hits.len()
            )
        }
        Some(_) => {
            let level_critical = level_critical_path(&search, width, opt);
            Ok(ReadCost { level_critical, ..read_cost(Answer::Candidates, cost) })
        }
        None => Ok(read_cost(Answer::Bwa, cost)),
    }
}

/// The GPU's level search's critical path for the read, in pops (pass 3's pools, so that it
/// finishes; 0 where it gives the read up).
fn level_critical_path(search: &Search, width: &[Width], opt: &GapOptions) -> u64 {
    let mut cost = LevelCost::default();
    let flags =
        LevelFlags { exact_entries_limit: true, root_chain: true, refill: None, drop_at_push: true, gap_records: true };
    let done = level_search(search, &mut width.to_vec(), opt, LANES, 2_000_000 / CHUNK, flags, &mut cost, None);
    done.map_or(0, |_| cost.critical_pops as u64)
}

pub fn run(args: CandidatesArgs) -> Result<()> {
    let bwt = Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let opt = args.aln.gap_options()?;
    let reads = profile_reads(&args.reads, args.max_reads, &opt, |read, opt| profile_read(&bwt, read, opt, &args))?;
    print_table(&reads);
    Ok(())
}

/// A row of the table: reads, bwa's pops, and what answering them as the candidates do cost.
#[derive(Default)]
struct Row {
    reads: u64,
    pops: u64,
    first_pass: u64,
    answered: u64,
    answered_pops: u64,
    cost: Cost,
    left: u64,
    /// What the reads finished by the first pass or left to bwa cost.
    other_cost: u64,
}

impl Row {
    fn add(&mut self, r: &ReadCost) {
        (self.reads, self.pops) = (self.reads + 1, self.pops + r.pops);
        match r.answer {
            Answer::FirstPass => (self.first_pass, self.other_cost) = (self.first_pass + 1, self.other_cost + r.pops),
            Answer::Candidates => {
                (self.answered, self.answered_pops) = (self.answered + 1, self.answered_pops + r.pops);
                self.cost.add(&r.cost);
            }
            Answer::Bwa => (self.left, self.other_cost) = (self.left + 1, self.other_cost + r.cost.sum() + r.pops),
        }
    }

    fn print(&self, name: &str) {
        let c = &self.cost;
        let ratio = c.sum() as f64 / self.answered_pops.max(1) as f64;
        println!(
            "{name}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{ratio:.3}\t{}\t{}",
            self.reads,
            self.pops,
            self.first_pass,
            self.answered,
            self.answered_pops,
            c.first,
            c.bounds,
            c.root_chain,
            c.enumeration,
            c.replay,
            c.rungs,
            self.left,
            self.other_cost
        );
    }
}

/// Per best score (bwa's), then for all reads: [`Row`]s.
fn print_table(reads: &[ReadCost]) {
    let mut rows: BTreeMap<Option<u32>, Row> = BTreeMap::new();
    let mut total = Row::default();
    for r in reads {
        rows.entry(r.best).or_default().add(r);
        total.add(r);
    }
    let unchecked = reads.iter().filter(|r| r.answer == Answer::Candidates && !r.under_m).count();
    println!(
        "{} reads; every read the candidates answered has bwa's hits ({unchecked} not compared: bwa's stack reached -m)",
        reads.len()
    );
    println!(
        "best score\treads\tbwa's pops\tbwa's search alone\tanswered by candidates\ttheir pops\t\
         first pass\tbounds\tof which the root's chain\tenumeration\treplay\trungs\tcandidates/bwa\tleft to bwa\tcost of the rest"
    );
    for (best, row) in &rows {
        row.print(&best.map_or("no hit".to_string(), |s| s.to_string()));
    }
    total.print("all");
    let answered: Vec<&ReadCost> = reads.iter().filter(|r| r.answer == Answer::Candidates).collect();
    let level: u64 = answered.iter().map(|r| r.level_critical).sum();
    let (searches, replays): (u64, u64) =
        answered.iter().fold((0, 0), |(a, b), r| (a + r.cost.search_rounds, b + r.cost.replay_rounds));
    println!(
        "critical path of the reads the candidates answered, a warp of {LANES} lanes a read: the level search {level} \
         pops; the candidates' searches {searches} rounds and replays {replays} ({:.2}x shorter)",
        level as f64 / (searches + replays).max(1) as f64
    );
    let answered = answered.into_iter();
    let (mut nodes, mut found): (Vec<usize>, Vec<usize>) =
        answered.map(|r| (r.cost.tree_nodes, r.cost.alignments)).unzip();
    nodes.sort_unstable();
    found.sort_unstable();
    for (what, v) in [("tree nodes", &nodes), ("alignments", &found)] {
        let p = |q| percentile(v, q);
        println!(
            "{what} per read the candidates answered: p50 {}, p90 {}, p99 {}, max {}",
            p(0.5),
            p(0.9),
            p(0.99),
            p(1.0)
        );
    }
    let mut why: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in reads.iter().filter(|r| r.answer == Answer::Bwa) {
        let e = why.entry(r.cost.left_why.unwrap_or("unknown")).or_default();
        (e.0, e.1) = (e.0 + 1, e.1 + r.pops);
    }
    for (reason, (n, pops)) in &why {
        println!("left to bwa's search: {n} reads ({pops} of bwa's pops): {reason}");
    }
    let after = total.cost.sum() + total.other_cost;
    println!(
        "all reads: bwa's search {} pops; the candidates where they answer, bwa's search elsewhere: \
         {after} ({:.2}x fewer)",
        total.pops,
        total.pops as f64 / after.max(1) as f64
    );
}
