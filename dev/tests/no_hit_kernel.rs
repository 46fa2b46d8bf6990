//! cuda/no_hit.cu's kernels built for the CPU (no_hit_kernel/host.cpp: CUDA's keywords become
//! nothing, the threads run one after another) give the model's answers
//! (`bcuda::search::no_hit::prove` with the pass's stack): the same reads proved, the same
//! lookups, and pass 1's queue of the reads left, then those with an exact match. Skipped
//! without a C++ compiler (`CXX`, else `c++`).

mod common;

use std::path::Path;
use std::process::Command;

use bcuda::gpu::no_hit::{defines, ENTRIES};
use bcuda::gpu::InexactSwitches;
use bcuda::search::no_hit::{prove, Answer};
use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};
use bcuda_index::Bwt;

/// The kernels built for the CPU in `dir`, or None without a compiler.
fn build_host(dir: &Path) -> Option<std::path::PathBuf> {
    let sw = InexactSwitches { no_hit_budget: 1, ..InexactSwitches::default() };
    common::build_cpu_kernels(dir, "no_hit_kernel/host.cpp", "no_hit_host", &defines(&sw))
}

/// A read: its max_diff, whether exact_match found it, its codes.
struct Read {
    max_diff: usize,
    exact: bool,
    codes: Vec<u8>,
}

/// Seeded reads of `genome`: random ones, substrings with edits and N, of 20 to 99 bases.
fn reads(genome: &[u8], n: usize, next: &mut impl FnMut() -> u64) -> Vec<Read> {
    (0..n)
        .map(|r| {
            let len = 20 + (next() % 80) as usize;
            let codes = read_with_edits(genome, len, r % 3 == 0, 5, next);
            Read { max_diff: (next() % 5) as usize, exact: next().is_multiple_of(5), codes }
        })
        .collect()
}

/// What the pass gives: each read's n_hits (-1: left), pass 1's queue, the lookups.
fn expected(bwt: &Bwt, reads: &[Read], extra: usize, max_lookups: u64) -> (Vec<i64>, Vec<usize>, u64) {
    let mut n_hits = vec![-1; reads.len()];
    let (mut queue, mut lookups) = (Vec::new(), 0);
    for (j, read) in reads.iter().enumerate().filter(|(_, r)| !r.exact) {
        let out = prove(bwt, &read.codes, read.max_diff + extra, max_lookups, ENTRIES);
        lookups += out.lookups;
        match out.answer {
            Answer::NoAlignment => n_hits[j] = 0,
            _ => queue.push(j),
        }
    }
    // inexact_order put the exact reads at the back, the first at the end.
    queue.extend((0..reads.len()).filter(|&j| reads[j].exact).rev());
    (n_hits, queue, lookups)
}

#[test]
fn the_kernels_built_for_the_cpu_give_the_models_answers() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = build_host(dir.path()) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let mut next = xorshift(0x5851_f42d_4c95_7f2d);
    let genome = genome_with_repeats(20_000, 100..700, &[5000, 9000, 13000], &mut next);
    let (fa, bwt) = indexed(dir.path(), &genome);
    let bwt_path = bcuda_index::with_ext(&fa, ".bwt");
    let reads = reads(&genome, 600, &mut next);
    let lines: String = reads
        .iter()
        .map(|r| {
            let codes: String = r.codes.iter().map(|&c| (b'0' + c) as char).collect();
            format!("{} {} {codes}\n", r.max_diff, r.exact as u8)
        })
        .collect();
    let reads_path = dir.path().join("reads.txt");
    std::fs::write(&reads_path, lines).unwrap();
    let mut proved = 0;
    for (extra, max_lookups) in [(0, 100_000), (0, 300), (2, 100_000)] {
        let out = Command::new(&host)
            .arg(&bwt_path)
            .arg(&reads_path)
            .args([extra.to_string(), max_lookups.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let numbers = |l: &str| -> Vec<i64> { l.split_whitespace().map(|x| x.parse().unwrap()).collect() };
        let (n_hits, queue, lookups) = expected(&bwt, &reads, extra, max_lookups);
        let got = numbers(lines[0]);
        let differs = (0..reads.len()).find(|&j| got.get(j) != n_hits.get(j));
        assert_eq!(
            differs,
            None,
            "n_hits (kernel, model) {:?}, extra {extra}, {max_lookups} lookups",
            differs.map(|j| (got.get(j), n_hits[j]))
        );
        let got_queue: Vec<usize> = numbers(lines[1]).iter().map(|&x| x as usize).collect();
        assert!(got_queue == queue, "pass 1's queue, extra {extra}, {max_lookups} lookups");
        assert_eq!(lines[2].parse::<u64>().unwrap(), lookups, "lookups, extra {extra}, {max_lookups} lookups");
        proved += n_hits.iter().filter(|&&n| n == 0).count();
    }
    assert!(proved > 300, "{proved} reads proved over the three runs");
}
