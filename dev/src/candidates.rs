//! `bcuda-dev candidates`: bwa's hits from candidate strings found by pigeonhole searches
//! (dev/src/hamming.rs) and replayed in bwa's order (dev/src/replay.rs), against bwa's search,
//! with the cost of each (docs/gpu-search.md, "Candidates from pigeonhole searches").
//!
//! A read's candidates are the strings within k mismatches of it, for k = 1, 2, ... up to
//! `--most-mismatches`. The replay of those of k gives bwa's hits once they hold every path bwa
//! pops: every path of a score up to the first hit's plus `s_mm`. So the ladder stops at the
//! first k where that hit has fewer than k mismatches (or k reaches `max_diff`) and no gap
//! fits under that score (a gap open costs more than the bound). Otherwise the read is left to
//! bwa's search, and pays for both.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda_index::Bwt;

use bcuda::sai::{AlnHit, GapOptions, MODE_NONSTOP};
use bcuda::search::no_hit::{suffix_bounds, Bounds};
use bcuda::search::{align_read_with, prepare_read, HitList, ReadBuffers, Search, Width};

use crate::aln_flags::{profile_reads, AlnFlags};
use crate::replay::{candidate_tree, replay};
use crate::stack_profile::Counting;

#[derive(clap::Args, Debug)]
pub struct CandidatesArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    #[command(flatten)]
    pub aln: AlnFlags,
    /// The ladder's last k: reads whose candidates need more mismatches go to bwa's search.
    #[arg(long, default_value_t = 3)]
    pub most_mismatches: usize,
    /// Run bwa's search for this many pops first, as the GPU's first pass does: the reads it
    /// finishes cost their pops, the others that many more, and the ladder starts from what it
    /// learnt (the first hit's score, or the score it reached). 0: none.
    #[arg(long, default_value_t = 0)]
    pub first_pops: usize,
    /// Profile at most this many reads.
    #[arg(long)]
    pub max_reads: Option<usize>,
}

/// What the candidates cost one read, in pairs of occurrence lookups (a bwa pop or a replayed
/// step reads two rows' counts; bwa's exact extension after its last difference is counted on
/// neither side): the first pass's pops, the suffix bounds (the prefix bounds are bwa's D
/// array), the pigeonhole searches and the replay.
#[derive(Clone, Copy, Default)]
struct Cost {
    first: u64,
    bounds: u64,
    enumeration: u64,
    replay: u64,
    rungs: u64,
}

impl Cost {
    fn sum(&self) -> u64 {
        self.first + self.bounds + self.enumeration + self.replay
    }

    fn add(&mut self, o: &Cost) {
        self.first += o.first;
        self.bounds += o.bounds;
        self.enumeration += o.enumeration;
        self.replay += o.replay;
        self.rungs += o.rungs;
    }
}

/// How one read was answered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    FirstPass,
    Candidates,
    /// Left to bwa's search after the attempt.
    Bwa,
}

/// One read: bwa's best score and pops, how it was answered and what that cost.
struct ReadCost {
    best: Option<u32>,
    pops: u64,
    answer: Answer,
    cost: Cost,
}

/// bwa's hits from the candidate ladder, starting from a best score of at least `lower`, or
/// None where it cannot tell.
fn candidate_hits(
    search: &Search,
    width: &[Width],
    opt: &GapOptions,
    (most, lower): (usize, i32),
    cost: &mut Cost,
) -> Option<Vec<AlnHit>> {
    let max_diff = HitList::new(opt).max_diff;
    if search.too_many_ns(max_diff) {
        return Some(Vec::new());
    }
    if opt.mode & MODE_NONSTOP != 0 || max_diff < 1 || lower + opt.s_mm >= opt.s_gapo {
        return None;
    }
    let mut lookups = 0;
    let len = search.seq.len();
    let after = suffix_bounds(search.bwt, search.seq, &mut lookups);
    let mut before: Vec<u8> = width[..len].iter().map(|w| w.bid.clamp(0, 255) as u8).collect();
    before.insert(0, 0);
    let bounds = Bounds { after, before };
    cost.bounds = lookups / 2;
    let fewest = (bounds.after[0].max(bounds.before[len]) as i32).max((lower + opt.s_mm - 1) / opt.s_mm);
    for k in (fewest as usize + 1).max(1)..=most.min(max_diff as usize) {
        let (strings, lookups) = crate::hamming::within(search.bwt, search.seq, k, &bounds)?;
        let tree = candidate_tree(search, &strings);
        let r = replay(search, width, opt, &tree, (0..tree.len()).collect());
        (cost.enumeration, cost.replay, cost.rungs) =
            (cost.enumeration + lookups / 2, cost.replay + r.steps as u64, cost.rungs + 1);
        if holds_every_path(r.hits.first(), k, max_diff, opt) {
            return Some(r.hits);
        }
    }
    None
}

/// Whether the strings within k mismatches hold every path bwa pops, given the first hit.
fn holds_every_path(first: Option<&AlnHit>, k: usize, max_diff: i32, opt: &GapOptions) -> bool {
    let Some(first) = first else { return false };
    let bound = first.score as i32 + opt.s_mm;
    let mismatches = (bound / opt.s_mm) as usize;
    bound < opt.s_gapo && (mismatches <= k || k >= max_diff as usize)
}

fn profile_read(bwt: &Bwt, read: &[u8], opt: &GapOptions, args: &CandidatesArgs) -> Result<ReadCost> {
    let mut buffers = ReadBuffers::default();
    let mut oracle = Counting::default();
    oracle.watch = args.first_pops;
    let hits = align_read_with(bwt, None, read, opt, &mut oracle, &mut buffers).expect("bwa's stack holds every entry");
    let (pops, best) = (oracle.pops as u64, hits.first().map(|h| h.score));
    let mut cost = Cost::default();
    if args.first_pops > 0 && oracle.pops <= args.first_pops {
        cost.first = pops;
        return Ok(ReadCost { best, pops, answer: Answer::FirstPass, cost });
    }
    // What a first pass of that many pops learnt: the first hit's score, or that every lower
    // score was popped without a hit.
    let lower = match (args.first_pops, oracle.before_hit) {
        (0, _) => 0,
        (n, Some(at)) if at <= n => best.map_or(0, |b| b as i32),
        _ => oracle.score_at_watch.unwrap_or(0),
    };
    cost.first = args.first_pops as u64;
    let (local, use_seed) = prepare_read(bwt, read, opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
    let found = candidate_hits(&search, width, &local, (args.most_mismatches, lower), &mut cost);
    match found {
        Some(found) if found != hits && oracle.peak < opt.max_entries as usize => {
            bail!(
                "the candidates gave {} hits where bwa's search gives {}: {found:?} vs {hits:?}",
                found.len(),
                hits.len()
            )
        }
        Some(_) => Ok(ReadCost { best, pops, answer: Answer::Candidates, cost }),
        None => Ok(ReadCost { best, pops, answer: Answer::Bwa, cost }),
    }
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
            "{name}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{ratio:.3}\t{}\t{}",
            self.reads,
            self.pops,
            self.first_pass,
            self.answered,
            self.answered_pops,
            c.first,
            c.bounds,
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
    println!("{} reads; every read the candidates answered has bwa's hits", reads.len());
    println!(
        "best score\treads\tbwa's pops\tfinished in the first pass\tanswered by candidates\ttheir pops\t\
         first pass\tbounds\tenumeration\treplay\trungs\tcandidates/bwa\tleft to bwa\tcost of the rest"
    );
    for (best, row) in &rows {
        row.print(&best.map_or("no hit".to_string(), |s| s.to_string()));
    }
    total.print("all");
    let after = total.cost.sum() + total.other_cost;
    println!(
        "all reads: bwa's search {} pops; the candidates where they answer, bwa's search elsewhere: \
         {after} ({:.2}x fewer)",
        total.pops,
        total.pops as f64 / after.max(1) as f64
    );
}
