//! cuda/m_guard.cuh built for the CPU (m_guard_kernel/host.cpp): guard_bound, the -m guard's
//! bound of the ladder's rungs in the team passes, for a best hit of two mismatches, is the model's
//! (src/search/m_guard.rs, `entries_bound` with bwa's two D arrays, and in the second stage the
//! further D arrays too) on random reads, D arrays and entry points. Skipped without a C++
//! compiler (`CXX`, else `c++`).

mod common;

use bcuda::sai::GapOptions;
use bcuda::search::m_guard::{entries_bound, DArray, EntryCounts, GuardRead, FURTHER_STARTS};
use bcuda::search::seeded::xorshift;
use bcuda::search::Width;

/// A random D array of `n` cells: the bid grows at about one cell in `block`, and the width
/// falls within a block (a block that did not occur ends at the cell where the bid grows).
fn d_array(next: &mut impl FnMut() -> u64, n: usize, block: u64) -> Vec<Width> {
    let (mut bid, mut w) = (0, 1 + next() % 100_000);
    (0..n)
        .map(|_| {
            if next().is_multiple_of(block) {
                bid += 1;
                w = 1 + next() % 100_000;
            } else {
                w = (w - w / (1 + next() % 8)).max(1);
            }
            Width { w, bid }
        })
        .collect()
}

/// Sparse random counts of entry points, by position.
fn entry_points(next: &mut impl FnMut() -> u64, len: usize, share: u64) -> Vec<u32> {
    (0..=len).map(|_| if next().is_multiple_of(share) { (next() % 40) as u32 } else { 0 }).collect()
}

fn cell(w: &Width) -> u64 {
    w.w | (w.bid as u64) << 48
}

/// The host's bound for one read (u64::MAX where a count outgrew 32 bits), with the further D
/// arrays `further` (array k from position (k + 1) x FURTHER_STARTS).
fn kernel_bound(
    host: &std::path::Path,
    read: &GuardRead,
    width: &[Width],
    seed: &[Width],
    further: &[Vec<Width>],
) -> u64 {
    let (seq, counts) = (read.seq, read.counts);
    let len = seq.len();
    let row = |n: usize| &counts.mm[n * (len + 1)..][..len + 1];
    let mut input = format!("{len} {} {}\n", len - seed.len(), read.bounded_pops);
    let words = seq.iter().map(|&b| b as u64).chain(width.iter().chain(seed).map(cell));
    let words = words.chain(row(1).iter().chain(row(2)).map(|&c| c as u64));
    let words = words.chain([further.len() as u64]).chain(further.iter().flatten().map(cell));
    for x in words {
        input += &format!("{x} ");
    }
    common::run_host(host, &input).trim().parse().unwrap()
}

/// Random further D arrays for a read of `len` bases: none for one case in three, else from
/// every FURTHER_STARTS-th position below `len`.
fn further_d_arrays(next: &mut impl FnMut() -> u64, len: usize, block: u64) -> Vec<Vec<Width>> {
    if next().is_multiple_of(3) {
        return Vec::new();
    }
    (FURTHER_STARTS..len).step_by(FURTHER_STARTS).map(|start| d_array(next, len - start, block)).collect()
}

/// m_guard_kernel/host.cpp built in `dir`; none (the test skipped) without a C++ compiler.
fn host_in(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let host = common::build_cpu_kernels(dir, "m_guard_kernel/host.cpp", "m_guard_kernel", &[]);
    if host.is_none() {
        eprintln!("skipped: no C++ compiler");
    }
    host
}

#[test]
fn the_kernels_bound_is_the_models_for_a_best_hit_of_two_mismatches() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = host_in(dir.path()) else { return };
    let opt = GapOptions::default();
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let (mut bounded, mut proved_further) = (0, 0);
    for case in 0..400 {
        let len = 20 + (next() % 130) as usize;
        let seq: Vec<u8> = (0..len).map(|_| if next().is_multiple_of(50) { 4 } else { (next() % 4) as u8 }).collect();
        let block = 4 + next() % 20;
        let width = d_array(&mut next, len + 1, block);
        // A seed of bwa's default length where the read is longer, as aln's is.
        let seed = if len > 32 { d_array(&mut next, 32, block) } else { Vec::new() };
        let mut counts = EntryCounts::new(len, 5);
        let share = 1 + next() % 30;
        for n in 1..=2 {
            counts.mm[n * (len + 1)..][..len + 1].copy_from_slice(&entry_points(&mut next, len, share));
        }
        let read = GuardRead { seq: &seq, counts: &counts, bounded_pops: next() % 100_000, best_score: 6, d_star: 2 };
        let further = further_d_arrays(&mut next, len, block);
        let mut d_arrays: Vec<DArray> = vec![(0, &width[..len])];
        if !seed.is_empty() {
            d_arrays.push((len - seed.len(), &seed[..]));
        }
        let starts = (1..).map(|k| k * FURTHER_STARTS);
        d_arrays.extend(starts.zip(&further).map(|(start, w)| (start, &w[..])));
        let model = entries_bound(&read, &d_arrays, &opt).expect("the bound applies: no gap pops");
        let bwa_arrays = if seed.is_empty() { 1 } else { 2 };
        let first_stage = entries_bound(&read, &d_arrays[..bwa_arrays], &opt).unwrap();
        let bound = kernel_bound(&host, &read, &width[..=len], &seed, &further);
        assert_ne!(bound, u64::MAX, "case {case}: a count outgrew 32 bits");
        assert_eq!(bound, model, "case {case}: len {len}");
        let max_entries = opt.max_entries as u64;
        bounded += (first_stage <= max_entries) as usize;
        proved_further += (first_stage > max_entries && model <= max_entries) as usize;
    }
    // Both sides of -m are tried with bwa's own D arrays, and the further ones prove some reads.
    assert!(bounded > 20 && bounded < 380, "{bounded} of 400 under -m");
    assert!(proved_further > 10, "the further D arrays proved {proved_further} reads");
}

/// A D array whose bid falls somewhere (bwt_cal_width's never does) leaves the read unprovable,
/// and the bound reads no cell outside its arrays (garbage tables, bids past them).
#[test]
fn a_falling_or_outsize_bid_leaves_the_read_unprovable() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = host_in(dir.path()) else { return };
    let len = 40;
    let seq = vec![1u8; len];
    let mut counts = EntryCounts::new(len, 5);
    counts.mm[len + 1 + 3] = 2;
    let read = GuardRead { seq: &seq, counts: &counts, bounded_pops: 10, best_score: 6, d_star: 2 };
    let steady: Vec<Width> = (0..=len).map(|x| Width { w: 100 - x as u64, bid: (x / 10) as i32 }).collect();
    assert_ne!(kernel_bound(&host, &read, &steady, &[], &[]), u64::MAX, "rising bids bound the read");
    for (x, bid) in [(25, 1), (12, 0), (30, 1_000)] {
        let mut width = steady.clone();
        width[x].bid = bid;
        assert_eq!(kernel_bound(&host, &read, &width, &[], &[]), u64::MAX, "bid {bid} at {x}");
    }
}
