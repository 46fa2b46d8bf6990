//! The `-m` guard's entry points as the team kernel counts them (cuda/inexact_match.cu built for
//! the CPU with the rungs, entry_points_kernel/host.cpp) are the model's
//! (`bcuda::search::m_guard::GuardWatch`), read by read: each pop the search bounded by a guess
//! makes before its first hit goes through the kernel's own `step`, which counts where it would
//! on the GPU. Both team kernels are built: pass 2's, and pass 3's with its one-base step.
//! Skipped without a C++ compiler (`CXX`, else `c++`).

mod common;
mod guard_model;

use std::path::Path;
use std::process::Command;

use bcuda::aln_options::{batch_options, hit_diffs};
use bcuda::gpu::InexactSwitches;
use bcuda::sai::{GapOptions, MODE_GAPE};
use bcuda::search::m_guard::{EntryCounts, GuardWatch};
use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};
use bcuda::search::stack::{Entry, GapStack};
use bcuda::search::{match_gap, prepare_read, ReadBuffers, Search, Width};
use bcuda_index::Bwt;

use guard_model::{packed, Watched};

/// One read searched with the guess `g` under its own limit `full`: its line for host.cpp and
/// the model's counts.
struct Case {
    line: String,
    len: usize,
    g: i32,
    counts: EntryCounts,
}

/// The line host.cpp reads for a read (see its header).
fn line(seq: &[u8], g: i32, opt: &GapOptions, width: &[Width], seed: Option<&[Width]>, pops: &[Entry]) -> String {
    let mut f = vec![seq.len().to_string(), g.to_string(), opt.max_diff.to_string()];
    // The options as the GPU takes them (the batch's upload).
    f.extend(bytemuck::cast::<GapOptions, [i32; 16]>(*opt).map(|x| x.to_string()));
    f.push(seq.iter().map(|&c| (b'0' + c) as char).collect());
    f.extend(width.iter().map(|w| packed(w).to_string()));
    f.push((seed.is_some() as u8).to_string());
    f.extend(seed.into_iter().flatten().map(|w| packed(w).to_string()));
    f.push(pops.len().to_string());
    for e in pops {
        let i = (e.info & 0xffff) as i64;
        f.extend([i, e.k as i64, e.l as i64].map(|x| x.to_string()));
        f.extend(
            [e.n_mm as u16, e.n_gapo as u16, e.n_gape as u16, e.n_ins, e.n_del, e.state as u16].map(|x| x.to_string()),
        );
    }
    f.join(" ") + "\n"
}

/// `read` searched with the guess d* + 1 + `above` (under its own limit), as a rung that
/// answers it searches it; None without a hit or where the guess is not under the limit.
fn case(bwt: &Bwt, read: &[u8], batch_opt: &GapOptions, above: i32) -> Option<Case> {
    let mut buffers = ReadBuffers::default();
    let (opt, use_seed) = prepare_read(bwt, read, batch_opt, &mut buffers);
    let ReadBuffers { width, seed_width, seq } = &buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &opt, intervals: None };
    let full = opt.max_diff;
    let bwa = match_gap(&search, &mut width.clone(), batch_opt, &mut GapStack::default(), full).unwrap();
    let g = hit_diffs(bwa.first()?, &opt) + 1 + above;
    if g >= full {
        return None;
    }
    let watch = GuardWatch::new(&search, width, full, g);
    let mut stack = Watched::new(watch);
    match_gap(&search, &mut width.clone(), batch_opt, &mut stack, g).unwrap();
    let seed = use_seed.then(|| &seed_width[..opt.seed_len as usize + 1]);
    Some(Case {
        line: line(seq, g, &opt, width, seed, &stack.before_hit),
        len: seq.len(),
        g,
        counts: stack.watch.counts(),
    })
}

/// Seeded reads of `genome` of 25 to 124 bases with fewer than `edit_draws` edits, some with N.
fn edited(genome: &[u8], n: usize, edit_draws: u64, next: &mut impl FnMut() -> u64) -> Vec<Vec<u8>> {
    (0..n).map(|j| read_with_edits(genome, 25 + (next() % 100) as usize, j % 7 == 0, edit_draws, next)).collect()
}

/// The cases of `reads` under `opt`, with the guess d* + 1 and d* + 2.
fn cases(bwt: &Bwt, reads: &[Vec<u8>], opt: &GapOptions) -> Vec<Case> {
    let batch_opt = batch_options(opt, reads.iter().map(Vec::len).max().unwrap_or(0));
    let guesses = [0, 1].iter().flat_map(|&above| reads.iter().map(move |r| (r, above)));
    guesses.filter_map(|(r, above)| case(bwt, r, &batch_opt, above)).collect()
}

/// Each case's counters as host.cpp prints them.
fn host_counts(host: &Path, dir: &Path, bwt_path: &Path, cases: &[Case]) -> Vec<Vec<u64>> {
    let path = dir.join("cases.txt");
    std::fs::write(&path, cases.iter().map(|c| c.line.as_str()).collect::<String>()).unwrap();
    let out = Command::new(host).arg(bwt_path).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines().map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect()).collect()
}

/// The model's counts in the kernel's layout for a rung of limit g: the other gap entry points'
/// lowest score, the two rows of gap chains, then the mismatch rows of levels 0 to g + 1 (no
/// entry point has more mismatches: the model's rows above are checked empty).
fn expected(c: &Case) -> Vec<u64> {
    let (row, levels) = (c.len + 1, c.g as usize + 2);
    let mm = &c.counts.mm;
    assert!(mm[(levels * row).min(mm.len())..].iter().all(|&x| x == 0), "an entry point above g + 1 mismatches");
    let mut v = vec![0, c.counts.other_gap_score as u64];
    v.extend(c.counts.gap.iter().map(|&x| x as u64));
    v.extend((0..levels * row).map(|j| mm.get(j).copied().unwrap_or(0) as u64));
    v
}

#[test]
fn the_team_kernels_count_the_models_entry_points() {
    let dir = tempfile::tempdir().unwrap();
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let genome = genome_with_repeats(40_000, 200..900, &[6000, 11000, 17000, 23000, 31000], &mut next);
    let (fa, bwt) = indexed(dir.path(), &genome);
    let bwt_path = bcuda_index::with_ext(&fa, ".bwt");
    let five = GapOptions { fnr: -1.0, max_diff: 5, ..GapOptions::default() };
    let ancient = GapOptions { seed_len: 1024, fnr: 0.01, max_gapo: 2, ..GapOptions::default() };
    let mut all = cases(&bwt, &edited(&genome, 150, 5, &mut next), &GapOptions::default());
    all.extend(cases(&bwt, &edited(&genome, 150, 7, &mut next), &five));
    all.extend(cases(&bwt, &edited(&genome, 100, 6, &mut next), &ancient));
    // Gaps cheaper than mismatches, so that gap entries pop before the first hits, and deletions
    // extended only within the limit (-d 1), where the rung and the full limit differ.
    let cheap_gaps = GapOptions { s_gapo: 2, s_gape: 1, max_gape: 4, max_del_occ: 1, ..five };
    all.extend(cases(&bwt, &edited(&genome, 100, 6, &mut next), &cheap_gaps));
    // With -e, gap extensions are not differences: a deletion extends where the full limit
    // allows it and the rung's does not.
    let long_gaps = GapOptions { mode: cheap_gaps.mode & !MODE_GAPE, ..cheap_gaps };
    all.extend(cases(&bwt, &edited(&genome, 100, 6, &mut next), &long_gaps));
    let counted = all.iter().filter(|c| expected(c)[2..].iter().any(|&x| x > 0)).count();
    let gapped = all.iter().filter(|c| c.counts.gap.iter().any(|&x| x > 0) || c.counts.other_gap_score != u32::MAX);
    let gapped = gapped.count();
    // Pass 2's one-warp teams and pass 3's large ones, whose step loads one base where the rung
    // allows no difference.
    // bwa's occurrence array, which the host reads from the .bwt (the sectors are built on a GPU).
    let switches = InexactSwitches { occ_sectors: false, occ_l1: 0, ..InexactSwitches::default() };
    for (team, mut defines) in switches.modules() {
        defines.push(format!("-Drungs={}", (1 << 6) - 2));
        let name = format!("entry_points_host_{team}");
        let Some(host) = common::build_cpu_kernels(dir.path(), "entry_points_kernel/host.cpp", &name, &defines) else {
            eprintln!("skipped: no C++ compiler");
            return;
        };
        let got = host_counts(&host, dir.path(), &bwt_path, &all);
        assert_eq!(got.len(), all.len());
        for (j, (c, got)) in all.iter().zip(&got).enumerate() {
            let mut want = expected(c);
            want[0] = got[0]; // the pops are counted by the search loop, not by step
            assert_eq!(*got, want, "team {team}, read {j} (g {}): the kernel's counters, then the model's", c.g);
        }
    }
    eprintln!("{} reads, {counted} with entry points, {gapped} with gap entry points", all.len());
    assert!(counted >= 100 && gapped >= 5, "too few reads of a kind");
}
