//! cuda/m_guard.cuh built for the CPU (m_guard_kernel/host.cpp: CUDA's keywords become nothing)
//! gives the `-m` guard's bound of the model (`bcuda::search::m_guard`), read by read: from
//! each read's entry point counters, D arrays, bounded pops, best score and d*, as the search
//! bounded from the start (`bcuda-dev prune-bound`'s) leaves them. Skipped without a C++
//! compiler (`CXX`, else `c++`).

mod common;
mod guard_model;

use std::path::Path;
use std::process::Command;

use bcuda::aln_options::{batch_options, hit_diffs};
use bcuda::sai::{GapOptions, MODE_NONSTOP};
use bcuda::search::m_guard::{
    bwa_d_arrays, counted_bound, further_d_arrays, stack_bound, EntryCounts, GuardBound, GuardRead, GuardWatch,
    DELETION, INSERTION,
};
use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};
use bcuda::search::stack::GapStack;
use bcuda::search::{match_gap, prepare_read, ReadBuffers, Search, Width};
use bcuda_index::Bwt;

use guard_model::{packed, Watched};

/// One read as the guard sees it at the bounded search's end, and the model's bound.
struct Case {
    seq: Vec<u8>,
    counts: EntryCounts,
    bounded_pops: u64,
    best_score: i32,
    d_star: i32,
    /// The read's own options.
    opt: GapOptions,
    /// bwa's D arrays (the read's, the seed's), then the further ones.
    d_arrays: Vec<(usize, Vec<Width>)>,
    n_bwa: usize,
    bound: Option<GuardBound>,
}

impl Case {
    fn read(&self) -> GuardRead<'_> {
        GuardRead {
            seq: &self.seq,
            counts: &self.counts,
            bounded_pops: self.bounded_pops,
            best_score: self.best_score,
            d_star: self.d_star,
        }
    }

    /// The model's bound from the counters as they are now.
    fn counted_bound(&self) -> Option<GuardBound> {
        let bwa: Vec<(usize, &[Width])> = self.d_arrays[..self.n_bwa].iter().map(|(s, w)| (*s, &w[..])).collect();
        counted_bound(&self.read(), &bwa, || self.d_arrays[self.n_bwa..].to_vec(), &self.opt)
    }

    /// The case as a line of host.cpp's input.
    fn line(&self) -> String {
        let o = &self.opt;
        let nonstop = (o.mode & MODE_NONSTOP != 0) as u8;
        let mut f = vec![self.seq.len().to_string(), self.counts.full.to_string(), self.bounded_pops.to_string()];
        f.extend([self.best_score, self.d_star, o.s_mm, o.s_gapo, o.s_gape, o.max_entries].map(|x| x.to_string()));
        f.extend([nonstop.to_string(), self.counts.other_gap_score.to_string()]);
        f.push(self.seq.iter().map(|&c| (b'0' + c) as char).collect());
        f.extend(self.counts.mm.iter().chain(&self.counts.gap).map(|c| c.to_string()));
        f.extend([self.n_bwa, self.d_arrays.len()].map(|x| x.to_string()));
        for (start, w) in &self.d_arrays {
            f.extend([start.to_string(), w.len().to_string()]);
            f.extend(w.iter().map(|c| packed(c).to_string()));
        }
        f.join(" ") + "\n"
    }
}

/// `read` searched as prune-bound searches it: bwa's search for d*, then from the start with
/// `g = min(d* + 1, full)` and the guard watching. None without a hit.
fn case(bwt: &Bwt, read: &[u8], batch_opt: &GapOptions) -> Option<Case> {
    let mut buffers = ReadBuffers::default();
    let (opt, use_seed) = prepare_read(bwt, read, batch_opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &opt, intervals: None };
    let full = opt.max_diff;
    let bwa = match_gap(&search, &mut width.clone(), batch_opt, &mut GapStack::default(), full).unwrap();
    let g = (hit_diffs(bwa.first()?, &opt) + 1).min(full);
    let watch = GuardWatch::new(&search, width, full, g);
    let mut stack = Watched::new(watch);
    let hits = match_gap(&search, &mut width.clone(), batch_opt, &mut stack, g).unwrap();
    let (best, watch) = (hits.first()?, &stack.watch);
    assert!(!watch.inconsistent, "a pop found a hit with one bound and not with the other");
    let d_star = hit_diffs(best, &opt);
    let bwa_arrays = bwa_d_arrays(watch);
    let n_bwa = bwa_arrays.len();
    let mut d_arrays: Vec<(usize, Vec<Width>)> = bwa_arrays.into_iter().map(|(s, w)| (s, w.to_vec())).collect();
    d_arrays.extend(further_d_arrays(watch));
    Some(Case {
        seq: seq.clone(),
        counts: watch.counts(),
        bounded_pops: stack.pops as u64,
        best_score: best.score as i32,
        d_star,
        opt,
        d_arrays,
        n_bwa,
        bound: stack_bound(watch, stack.pops, best, d_star, &opt),
    })
}

/// The cases of `reads` (those with a hit), searched with `opt` as aln's batch would be.
fn cases(bwt: &Bwt, reads: &[Vec<u8>], opt: &GapOptions) -> Vec<Case> {
    let batch_opt = batch_options(opt, reads.iter().map(Vec::len).max().unwrap_or(0));
    reads.iter().filter_map(|r| case(bwt, r, &batch_opt)).collect()
}

/// `n` seeded substrings of `genome` of 25 to 124 bases, with fewer than `edit_draws` edits.
fn edited(genome: &[u8], n: usize, edit_draws: u64, next: &mut impl FnMut() -> u64) -> Vec<Vec<u8>> {
    (0..n).map(|_| read_with_edits(genome, 25 + (next() % 100) as usize, false, edit_draws, next)).collect()
}

/// `n` seeded substrings of `genome` of 40 to 119 bases with three substitutions: most have
/// d* = 3 with a best score of 3 s_mm, where gap opens pop as chains at bwa's penalties.
fn three_mismatches(genome: &[u8], n: usize, next: &mut impl FnMut() -> u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let len = 40 + (next() % 80) as usize;
            let at = (next() % (genome.len() - len) as u64) as usize;
            let mut read = genome[at..at + len].to_vec();
            for x in 0..3 {
                let p = x * len / 3 + (next() % (len / 3) as u64) as usize;
                read[p] = (read[p] + 1 + (next() % 3) as u8) % 4;
            }
            read
        })
        .collect()
}

/// Counters the bounded search leaves none of at these bounds (a gap open is an entry point
/// only where the D array bounds the rest of the read above d*), so that the bound's gap parts
/// are checked too: for each case where gap opens pop as chains, copies with heads of chains
/// added at positions drawn from `next`, and of those, one where another gap entry point scores
/// the last score bwa pops and one with an entry point of no difference (both leave no bound);
/// and copies of every tenth case with so many pops that the bound saturates.
fn synthetic(cases: &[Case], next: &mut impl FnMut() -> u64) -> Vec<Case> {
    let chains_pop = |c: &&Case| c.bound.is_some() && c.opt.s_gapo <= c.best_score + c.opt.s_mm;
    let copy = |c: &Case, counts: EntryCounts| {
        let mut copy = Case { counts, d_arrays: c.d_arrays.clone(), seq: c.seq.clone(), bound: None, ..*c };
        copy.bound = copy.counted_bound();
        copy
    };
    let mut out: Vec<Case> = cases
        .iter()
        .step_by(10)
        .map(|c| {
            let mut many = copy(c, c.counts.clone());
            many.bounded_pops = u64::MAX / 3;
            many.bound = many.counted_bound();
            many
        })
        .collect();
    for c in cases.iter().filter(chains_pop) {
        let mut chains = c.counts.clone();
        let row = chains.len + 1;
        for _ in 0..1 + next() % 4 {
            let kind = if next().is_multiple_of(2) { INSERTION } else { DELETION };
            chains.gap[kind * row + (next() % row as u64) as usize] += 1 + (next() % 3) as u32;
        }
        let other_pops = EntryCounts { other_gap_score: (c.best_score + c.opt.s_mm) as u32, ..chains.clone() };
        let mut no_difference = chains.clone();
        no_difference.mm[(next() % row as u64) as usize] += 1;
        out.extend([copy(c, chains), copy(c, other_pops), copy(c, no_difference)]);
    }
    out
}

/// host.cpp's answers on `cases`: each read's bound and whether it took the further D arrays.
fn host_bounds(host: &Path, dir: &Path, cases: &[Case]) -> Vec<Option<(u64, bool)>> {
    let path = dir.join("cases.txt");
    std::fs::write(&path, cases.iter().map(Case::line).collect::<String>()).unwrap();
    let out = Command::new(host).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let parse = |l: &str| match l.split_whitespace().collect::<Vec<_>>()[..] {
        ["none"] => None,
        [entries, further] => Some((entries.parse().unwrap(), further == "1")),
        _ => panic!("host.cpp printed {l:?}"),
    };
    text.lines().map(parse).collect()
}

/// The model's cases on seeded reads of `genome`: bwa's defaults with a small `-m` (further D
/// arrays), max_diff 5 (reads of d* = 3 with three mismatches, where gap opens pop as chains at
/// bwa's penalties, and reads of d* = 4 or a gap, where they pop otherwise: no bound), the same
/// with `-m 3000`, and `-N` (no bound).
fn model_cases(bwt: &Bwt, genome: &[u8], next: &mut impl FnMut() -> u64) -> Vec<Case> {
    let small_m = GapOptions { max_entries: 1000, ..GapOptions::default() };
    let five = GapOptions { fnr: -1.0, max_diff: 5, ..GapOptions::default() };
    let nonstop = GapOptions { mode: five.mode | MODE_NONSTOP, ..five };
    let mut all = cases(bwt, &edited(genome, 200, 5, next), &small_m);
    all.extend(cases(bwt, &edited(genome, 200, 7, next), &five));
    all.extend(cases(bwt, &three_mismatches(genome, 150, next), &five));
    all.extend(cases(bwt, &edited(genome, 100, 7, next), &GapOptions { max_entries: 3000, ..five }));
    all.extend(cases(bwt, &edited(genome, 20, 5, next), &nonstop));
    all
}

/// How many of `cases` have no bound, took the further D arrays, have gap chains, and have
/// mismatch entry points.
fn kinds(cases: &[Case]) -> [usize; 4] {
    let count = |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count();
    [
        count(&|c| c.bound.is_none()),
        count(&|c| c.bound.as_ref().is_some_and(|b| b.lookups > 0)),
        count(&|c| c.bound.is_some() && c.counts.gap.iter().any(|&g| g > 0)),
        count(&|c| c.counts.mm.iter().any(|&m| m > 0)),
    ]
}

#[test]
fn the_bound_built_for_the_cpu_is_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "m_guard_kernel/host.cpp", "m_guard_host", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let genome = genome_with_repeats(40_000, 200..900, &[6000, 11000, 17000, 23000, 31000], &mut next);
    let (_, bwt) = indexed(dir.path(), &genome);
    let mut all = model_cases(&bwt, &genome, &mut next);
    let searched = all.len();
    let synthetic = synthetic(&all, &mut next);
    all.extend(synthetic);
    let got = host_bounds(&host, dir.path(), &all);
    assert_eq!(got.len(), all.len());
    for (j, (c, got)) in all.iter().zip(&got).enumerate() {
        let model = c.bound.as_ref().map(|b| (b.entries, b.lookups > 0));
        assert_eq!(*got, model, "read {j}: (bound, further D arrays) from host.cpp, then the model; {}", c.line());
    }
    let ([none, further, _, entry_points], [_, _, chained, _]) = (kinds(&all[..searched]), kinds(&all[searched..]));
    eprintln!(
        "{searched} reads searched: {none} without a bound, {further} with further D arrays, {entry_points} with \
         mismatch entry points; {} synthetic, {chained} with gap chains",
        all.len() - searched
    );
    assert!(none >= 20 && further >= 20 && entry_points >= 100 && chained >= 50, "too few reads of a kind");
}
