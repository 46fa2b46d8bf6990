//! `bcuda-dev prune-bound`: whether bwa's search finds the same hits when it starts with the
//! difference bound its first hit sets. bwa's search (bwt_match_gap) runs with the read's full
//! `max_diff` until its first hit (diffs d*), then with `min(d* + 1, max_diff)`. Each read is
//! searched as bwa does (the oracle), then again from the start with `g = min(d* + 1, max_diff)`
//! (d* from the oracle; every other rule, bwa's stack, its cut-offs and its `-m`, unchanged),
//! and the two are compared: pops, the stack's peak, and the hits (same list, same order). Both
//! are the library's search ([`match_gap`]) on a stack that counts and watches it; the oracle's
//! hits are checked against [`align_read`] on every read. The bounded search also runs the `-m`
//! guard ([`crate::m_guard`]), which proves where bwa's `-m` cannot have stopped bwa's search,
//! and speculative ladders of guesses are costed where exact with it.

use std::path::PathBuf;

use anyhow::{bail, Result};
use bcuda::aln::CPU_BATCH;
use bcuda::aln_options::{batch_options, hit_diffs};
use bcuda::reads::{ReadBatchReader, ReadOptions};
use bcuda::sai::{AlnHit, GapOptions, MODE_GAPE};
use bcuda::search::stack::{Entry, Next, SearchStack};
use bcuda::search::{align_read, match_gap, prepare_read, ReadBuffers, Scratch, Search, StackFull, Width};
use rayon::prelude::*;

use crate::aln_flags::AlnFlags;
use crate::m_guard::{kernel_bounds, stack_bound, GuardWatch, KernelBounds};
use crate::stack_profile::Counting;

mod report;
use report::{print_by_d_star, print_guard, print_hits, print_ladders, print_peaks, write_per_read};

#[derive(clap::Args, Debug)]
pub struct PruneBoundArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    #[command(flatten)]
    pub aln: AlnFlags,
    /// Profile at most this many reads.
    #[arg(long)]
    pub max_reads: Option<usize>,
    /// Also check that the pruned search pops a subsequence of bwa's pops (same entries, same
    /// relative order), keeping every pop of both searches.
    #[arg(long)]
    pub check_order: bool,
    /// Reads with other hits to print in full.
    #[arg(long, default_value_t = 5)]
    pub show: usize,
    /// A speculative ladder to cost (repeatable): the guesses g tried in turn on reads that do
    /// not occur whole, e.g. `2,3`, or `full` for none; reads that occur whole try g = 1 first,
    /// and every read ends with bwa's full search.
    #[arg(long, value_parser = parse_ladder)]
    pub ladder: Vec<Ladder>,
    /// Write one line a read here: d*, both searches' pops, the `-m` guard's bound and each
    /// ladder's pops where exact with it.
    #[arg(long)]
    pub per_read: Option<PathBuf>,
}

/// The guesses of a speculative ladder for the reads that do not occur whole.
#[derive(Clone, Debug)]
pub struct Ladder(Vec<i32>);

fn parse_ladder(s: &str) -> Result<Ladder, String> {
    if s == "full" {
        return Ok(Ladder(Vec::new()));
    }
    let rungs: Result<Vec<i32>, _> = s.split(',').map(|g| g.trim().parse::<i32>()).collect();
    match rungs {
        Ok(r) if r.iter().all(|&g| g >= 1) => Ok(Ladder(r)),
        _ => Err(format!("a ladder is `full` or guesses of 1 or more separated by commas, not {s:?}")),
    }
}

impl std::fmt::Display for Ladder {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "g = 1 for reads that occur whole, else ")?;
        for g in &self.0 {
            write!(f, "g = {g}, then ")?;
        }
        write!(f, "full")
    }
}

/// One search's cost and hits.
#[derive(Clone, Default)]
struct Run {
    hits: Vec<AlnHit>,
    pops: usize,
    /// Pops up to and including the one that found the first hit (all of them without a hit).
    before_hit: usize,
    /// The most entries bwa's `-m` test saw (the stack and the held matching child).
    peak: usize,
    /// The search ended at bwa's `-m`.
    stopped_by_m: bool,
    /// Every entry popped and stepped, in order (with `--check-order`).
    popped: Option<Vec<Entry>>,
    /// A speculative search (see [`search_from`]) that proved nothing: it stopped there.
    rejected: bool,
    /// With a guard watching: the most entries bwa's stack can hold ([`stack_bound`]; None
    /// where the bound does not apply or without a hit).
    guard_bound: Option<u64>,
    /// The guard's lookups (further D arrays).
    guard_lookups: u64,
    /// The same bound in the cheaper forms a kernel could keep ([`kernel_bounds`]).
    kernel_bounds: KernelBounds,
    /// Pops a kernel's guard would load the extensions of to count their entry points
    /// ([`GuardWatch::extension_loads`]).
    extension_loads: usize,
    pops_with_entry_points: usize,
}

/// bwa's stack ([`Counting`] its pops and its first hit) watching [`match_gap`] for
/// [`search_from`]: the most entries bwa's `-m` test saw, whether `-m` stopped the search,
/// every entry stepped (with `--check-order`), and a speculative search's rejection, which
/// ends the search: the stack then has no more pops to give.
struct Profiled<'a> {
    counting: Counting,
    opt: &'a GapOptions,
    /// The search's starting bound, and whether it is a speculative one (a guess).
    max_diff: i32,
    guess: bool,
    /// Hits so far, as the last turn began.
    hits: usize,
    peak: usize,
    stopped_by_m: bool,
    popped: Option<Vec<Entry>>,
    /// The entry stepped last: at the first hit, the one that found it.
    last: Entry,
    rejected: bool,
    /// Watches the pops before the first hit for the `-m` guard.
    guard: Option<GuardWatch<'a>>,
}

impl Profiled<'_> {
    /// A guess is proved wrong by a pop or a first hit scoring this much.
    fn reject_score(&self) -> i32 {
        self.opt.s_mm * (self.max_diff + 1)
    }
}

impl SearchStack for Profiled<'_> {
    fn reset(&mut self, n_stacks: usize) {
        self.counting.reset(n_stacks);
        (self.hits, self.peak, self.stopped_by_m, self.rejected) = (0, 0, false, false);
        if let Some(popped) = &mut self.popped {
            popped.clear();
        }
    }
    fn push(&mut self, e: Entry) {
        self.counting.push(e);
    }
    /// A guess's search stops, rejected, before a first hit at a pop scoring
    /// [`Profiled::reject_score`] or more (the pop counts).
    fn pop(&mut self) -> Next {
        if self.rejected {
            return Next::OutOfPops;
        }
        let next = self.counting.pop();
        if let Next::Entry(e) = &next {
            if self.guess && self.hits == 0 && e.score() as i32 >= self.reject_score() {
                self.rejected = true;
                return Next::OutOfPops;
            }
        }
        next
    }
    fn pop_held(&mut self) -> bool {
        !self.rejected && self.counting.pop_held()
    }
    fn n_entries(&self) -> usize {
        self.counting.n_entries()
    }
    /// The first hit (found by the entry stepped last): a guess's search stops, rejected, if it
    /// has `max_diff` differences or more, or scores [`Profiled::reject_score`] or more.
    fn pop_no_more_than(&mut self, score: i32) {
        self.counting.pop_no_more_than(score);
        let e = &self.last;
        let gape = if self.opt.mode & MODE_GAPE != 0 { e.n_gape as i32 } else { 0 };
        let d = e.n_mm as i32 + e.n_gapo as i32 + gape;
        if self.guess && (d >= self.max_diff || e.score() as i32 >= self.reject_score()) {
            self.rejected = true;
        }
    }
    fn turn(&mut self, n_entries: usize, hits: usize) {
        if !self.rejected {
            self.peak = self.peak.max(n_entries);
            self.stopped_by_m |= n_entries > self.opt.max_entries as usize;
            self.hits = hits;
        }
    }
    /// The pop that ends the search is not stepped, so not kept: it is the top of its score's
    /// list, which the entries the pruned search never pushed can change.
    fn expanding(&mut self, e: &Entry) {
        self.last = *e;
        if let Some(popped) = &mut self.popped {
            popped.push(*e);
        }
        if let (Some(guard), 0) = (&mut self.guard, self.hits) {
            guard.watch(e);
        }
    }
}

/// [`match_gap`] (bwt_match_gap) on bwa's own stack, starting with `max_diff` differences
/// allowed instead of the read's full limit, counting its pops and its stack. The first hit's
/// cut-off stays bwa's: `min(d* + 1, search.opt.max_diff)`.
/// `guess`: a speculative search, which is bwa's only if its first hit has fewer than
/// `max_diff` differences and scores below `s_mm (max_diff + 1)` (a hit with more differences
/// scores at least that much, so none comes first in bwa's search); it stops, rejected, at a
/// first hit that does not, or before one at a pop scoring `s_mm (max_diff + 1)` or more (pops
/// score no less than the pops before them, and a hit scores what the entry that found it does).
/// A rejected search's hits are left out (it proved nothing). A read with more N bases than
/// `max_diff` is not searched (no pops, no hits): a guess on it is rejected.
fn search_from<'a>(
    search: &'a Search<'a>,
    width: &mut [Width],
    batch_opt: &GapOptions,
    max_diff: i32,
    (keep, guess, guard_width): (bool, bool, Option<&'a [Width]>),
) -> Run {
    let opt = search.opt;
    let guard = guard_width.map(|fresh| GuardWatch::new(search, fresh, opt.max_diff, max_diff));
    let mut stack = Profiled {
        counting: Counting::default(),
        opt,
        max_diff,
        guess,
        hits: 0,
        peak: 0,
        stopped_by_m: false,
        popped: keep.then(Vec::new),
        last: Entry::default(),
        rejected: false,
        guard,
    };
    let hits = match (match_gap(search, width, batch_opt, &mut stack, max_diff), stack.rejected) {
        (_, true) => Vec::new(),
        (Ok(hits), false) => hits,
        (Err(StackFull), false) => unreachable!("bwa's stack holds every entry"),
    };
    let pops = stack.counting.pops;
    let (guard, kernel) = match (&stack.guard, hits.first()) {
        (Some(watch), Some(best)) => {
            let d_star = hit_diffs(best, opt);
            (stack_bound(watch, pops, best, d_star, opt), kernel_bounds(watch, (pops, stack.peak), best, d_star, opt))
        }
        _ => (None, KernelBounds::default()),
    };
    Run {
        guard_bound: guard.as_ref().map(|g| g.entries),
        kernel_bounds: kernel,
        guard_lookups: guard.map_or(0, |g| g.lookups),
        extension_loads: stack.guard.as_ref().map_or(0, |w| w.extension_loads),
        pops_with_entry_points: stack.guard.as_ref().map_or(0, |w| w.pops_with_entry_points),
        before_hit: if hits.is_empty() { pops } else { stack.counting.before_hit.unwrap_or(0) },
        rejected: stack.rejected || (guess && hits.is_empty()),
        hits,
        pops,
        peak: stack.peak,
        stopped_by_m: stack.stopped_by_m,
        popped: stack.popped,
    }
}

/// One read: bwa's search, and the search bounded from the start (None without a hit: the
/// bound is then the full limit, the same search).
struct ReadResult {
    name: String,
    /// The first hit's differences (None: no hit).
    d_star: Option<i32>,
    /// The read's full limit and the bound `g` the pruned search started with.
    full: i32,
    g: i32,
    bwa: Run,
    pruned: Option<Run>,
    /// More N bases than `g` but not more than the full limit.
    ns_over_g: bool,
    /// With `--check-order`: whether the pruned search's pops are a subsequence of bwa's.
    in_order: Option<bool>,
    /// The read's cost under each `--ladder`.
    ladders: Vec<LadderCost>,
    /// bwa's best hit is in a class whose stack provably stays under `-m` (see [`m_safe`]).
    m_safe: bool,
    /// The `-m` guard proves the pruned search bwa's (see [`crate::m_guard`]).
    guard_ok: bool,
    /// bwa's `-m` for the read.
    max_entries: u64,
}

/// One read's cost under a speculative ladder.
#[derive(Clone, Copy, Default)]
struct LadderCost {
    /// Pops of every attempt: those rejected, and the accepted one or bwa's full search.
    pops: usize,
    /// Pops of the attempts rejected.
    wasted: usize,
    /// A guess was accepted (the read did not need bwa's full search).
    by_guess: bool,
    /// The accepted guess found other hits than bwa's search (must not happen).
    differs: bool,
    /// The guess accepted.
    accepted_g: i32,
}

/// A guess's search on one read.
#[derive(Clone, Copy)]
struct Attempt {
    g: i32,
    pops: usize,
    accepted: bool,
    differs: bool,
}

/// A read's cost under `ladder`: g = 1 if it occurs whole, else the ladder's guesses, each
/// searched from the start until one is accepted; guesses of the full limit or more are bwa's
/// full search, which ends the ladder.
fn ladder_cost(
    ladder: &Ladder,
    whole: bool,
    full: i32,
    bwa: &Run,
    attempt: &mut impl FnMut(i32) -> Attempt,
) -> LadderCost {
    let guesses = if whole { &[1][..] } else { &ladder.0[..] };
    let mut cost = LadderCost::default();
    for &g in guesses.iter().take_while(|&&g| g < full) {
        let a = attempt(g);
        cost.pops += a.pops;
        if a.accepted {
            (cost.by_guess, cost.differs, cost.accepted_g) = (true, a.differs, g);
            return cost;
        }
        cost.wasted += a.pops;
    }
    cost.pops += bwa.pops;
    cost
}

/// Every ladder's cost on one read, each guess searched once (`fresh`: the read's D array).
fn ladder_costs(
    search: &Search,
    fresh: &[Width],
    batch_opt: &GapOptions,
    ladders: &[Ladder],
    bwa: &Run,
) -> Vec<LadderCost> {
    let whole = search.root_intervals().len() == search.seq.len() + 1;
    let mut tried: Vec<Attempt> = Vec::new();
    let mut attempt = |g: i32| {
        if let Some(a) = tried.iter().find(|a| a.g == g) {
            return *a;
        }
        let run = search_from(search, &mut fresh.to_vec(), batch_opt, g, (false, true, None));
        let a = Attempt { g, pops: run.pops, accepted: !run.rejected, differs: !run.rejected && run.hits != bwa.hits };
        tried.push(a);
        a
    };
    ladders.iter().map(|l| ladder_cost(l, whole, search.opt.max_diff, bwa, &mut attempt)).collect()
}

/// The longest read occurring whole whose bwa stack cannot pass `max_entries` (bwa's `-m`),
/// as src/gpu/exact_replay.rs's `max_len_for`: 1 + 8 (len + 1)(3 len + 1) entries at most.
fn whole_read_max_len(max_entries: i32) -> usize {
    let fits = |len: u64| 8 * (len + 1) * (3 * len + 1) < max_entries.max(0) as u64;
    (0..512u64).take_while(|&len| fits(len + 1)).count()
}

/// Whether bwa's best hit puts the read in a class where a search bounded from the start is
/// exact with respect to `-m` (docs/gpu-search.md): best score 0 or `s_mm` on reads of up to
/// [`whole_read_max_len`] bases, or `2 s_mm` on reads of up to 55 bases without N where a gap
/// open costs more than `3 s_mm` (with `-m` of at least bwa's default, 2,000,000).
fn m_safe(bwa: &Run, seq: &[u8], opt: &GapOptions) -> bool {
    let Some(best) = bwa.hits.first() else { return false };
    let (score, len) = (best.score as i32, seq.len());
    let one = (score == 0 || score == opt.s_mm) && len <= whole_read_max_len(opt.max_entries);
    let two_ok = opt.max_entries >= 2_000_000 && opt.s_gapo > 3 * opt.s_mm;
    one || (two_ok && score == 2 * opt.s_mm && len <= 55 && seq.iter().all(|&c| c < 4))
}

/// Whether `sub` is a subsequence of `all`.
fn is_subsequence(sub: &[Entry], all: &[Entry]) -> bool {
    let mut rest = all.iter();
    sub.iter().all(|e| rest.any(|a| a == e))
}

impl ReadResult {
    fn differs(&self) -> bool {
        self.pruned.as_ref().is_some_and(|p| p.hits != self.bwa.hits)
    }
    fn pruned_or_bwa(&self) -> &Run {
        self.pruned.as_ref().unwrap_or(&self.bwa)
    }
    /// The `-m` guard's bound on bwa's stack (None where it does not apply or without a hit).
    fn guard_bound(&self) -> Option<u64> {
        self.pruned.as_ref().and_then(|p| p.guard_bound)
    }
    /// The kernel's forms of the bound ([`kernel_bounds`]).
    fn kernel_bounds(&self) -> KernelBounds {
        self.pruned.as_ref().map(|p| p.kernel_bounds).unwrap_or_default()
    }
    /// bwa's stack held more than the guard's bound (the theory says never).
    fn passed_guard(&self) -> bool {
        self.guard_bound().is_some_and(|b| self.bwa.peak as u64 > b)
    }
}

fn profile_read(
    bwt: &bcuda_index::Bwt,
    name: &str,
    read: &[u8],
    batch_opt: &GapOptions,
    (check_order, ladders): (bool, &[Ladder]),
) -> Result<ReadResult> {
    let mut buffers = ReadBuffers::default();
    let oracle = align_read(bwt, read, batch_opt, &mut Scratch::default());
    let (local, use_seed) = prepare_read(bwt, read, batch_opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &mut buffers;
    let fresh = width.clone();
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals: None };
    let full = local.max_diff;
    let mut bwa = search_from(&search, width, batch_opt, full, (check_order, false, None));
    if bwa.hits != oracle {
        bail!("{name}: bwa's search on the profiling stack gave other hits than align_read");
    }
    let d_star = bwa.hits.first().map(|h| hit_diffs(h, &local));
    let g = d_star.map_or(full, |d| (d + 1).min(full));
    let ns_over_g = search.too_many_ns(g) && !search.too_many_ns(full);
    let mut pruned = d_star.map(|_| {
        let mut width = fresh.clone();
        search_from(&search, &mut width, batch_opt, g, (check_order, false, Some(&fresh)))
    });
    let in_order = match (&bwa.popped, pruned.as_ref().map(|p| &p.popped)) {
        (Some(all), Some(Some(sub))) => Some(is_subsequence(sub, all)),
        (Some(_), None) => Some(true),
        _ => None,
    };
    bwa.popped = None;
    if let Some(p) = &mut pruned {
        p.popped = None;
    }
    let ladders = ladder_costs(&search, &fresh, batch_opt, ladders, &bwa);
    let m_safe = m_safe(&bwa, seq, &local);
    let limit = local.max_entries.max(0) as u64;
    let guard_ok = pruned.as_ref().and_then(|p| p.guard_bound).is_some_and(|b| b <= limit);
    Ok(ReadResult {
        name: name.to_string(),
        d_star,
        full,
        g,
        bwa,
        pruned,
        ns_over_g,
        in_order,
        ladders,
        m_safe,
        guard_ok,
        max_entries: limit,
    })
}

/// Every read of `args.reads` (their aligned part) profiled with the options aln sets per batch.
fn profile_reads(bwt: &bcuda_index::Bwt, args: &PruneBoundArgs) -> Result<Vec<ReadResult>> {
    let opt = args.aln.gap_options()?;
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let limit = args.max_reads.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    while out.len() < limit {
        let batch = reader.next_batch(CPU_BATCH.min(limit - out.len()))?;
        if batch.is_empty() {
            break;
        }
        let batch_opt = batch_options(&opt, batch.iter().map(|r| r.len).max().unwrap_or(0));
        let done: Result<Vec<ReadResult>> = batch
            .par_iter()
            .map(|r| profile_read(bwt, r.name, r.aligned(), &batch_opt, (args.check_order, &args.ladder)))
            .collect();
        out.extend(done?);
    }
    Ok(out)
}

pub fn run(args: PruneBoundArgs) -> Result<()> {
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let results = profile_reads(&bwt, &args)?;
    let ns = results.iter().filter(|r| r.ns_over_g).count();
    let limits: std::collections::BTreeSet<i32> = results.iter().map(|r| r.full).collect();
    println!(
        "{} reads; full max_diff {limits:?}; pruned search from g = min(d*+1, full) for the reads with a hit \
         (without one g = full: bwa's search); reads with more Ns than g but not than full: {ns}",
        results.len()
    );
    print_by_d_star(&results);
    print_peaks(&results);
    if args.check_order {
        let out = results.iter().filter(|r| r.in_order == Some(false)).count();
        println!("reads whose pruned pops are not a subsequence of bwa's pops: {out}");
    }
    for r in results.iter().filter(|r| r.bwa.stopped_by_m || r.pruned_or_bwa().stopped_by_m) {
        let p = r.pruned_or_bwa();
        println!(
            "stopped by -m: {}: d* {:?}, {} hits; bwa pops {} peak {} (-m: {}); pruned pops {} peak {} (-m: {})",
            r.name,
            r.d_star,
            r.bwa.hits.len(),
            r.bwa.pops,
            r.bwa.peak,
            r.bwa.stopped_by_m,
            p.pops,
            p.peak,
            p.stopped_by_m
        );
    }
    let differ: Vec<&ReadResult> = results.iter().filter(|r| r.differs()).collect();
    println!("reads whose hits differ: {}", differ.len());
    for r in differ.iter().take(args.show) {
        let p = r.pruned.as_ref().expect("a read that differs was searched again");
        println!(
            "{}: d* {:?}, full {}, g {}; bwa pops {} peak {} (-m: {}), pruned pops {} peak {} (-m: {})",
            r.name, r.d_star, r.full, r.g, r.bwa.pops, r.bwa.peak, r.bwa.stopped_by_m, p.pops, p.peak, p.stopped_by_m
        );
        print_hits("bwa", &r.bwa.hits);
        print_hits("pruned", &p.hits);
    }
    print_guard(&results);
    print_ladders(&results, &args.ladder);
    if let Some(path) = &args.per_read {
        write_per_read(path, &results, &args.ladder)?;
    }
    Ok(())
}
