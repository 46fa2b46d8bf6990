//! cuda/compact_hits.cu built for the CPU (compact_hits/host.cpp): the hits it packs, read back
//! as aln reads them (`read_firsts`), are every answered read's hits from its slot, in order,
//! with chunks landing in any order. Skipped without a C++ compiler (`CXX`, else `c++`).

mod common;

use bcuda::gpu::compact_hits::{chunk_words, kept, read_firsts, CHUNK_READS};
use bcuda::search::seeded::xorshift;

/// The kernel's `chunk_at` and packed words for these counts and hit slots.
fn run(host: &std::path::Path, per_read: usize, n_hits: &[i32], slots: &[u64]) -> (Vec<u32>, Vec<u64>) {
    let mut input = format!("{} {per_read} {CHUNK_READS}\n", n_hits.len());
    n_hits.iter().for_each(|c| input += &format!("{c} "));
    slots.iter().for_each(|w| input += &format!("{w} "));
    let text = common::run_host(host, &input);
    let mut lines = text.lines();
    let chunk_at = lines.next().unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
    let packed = lines.next().unwrap_or("").split_whitespace().map(|x| x.parse().unwrap()).collect();
    (chunk_at, packed)
}

#[test]
fn every_answered_reads_hits_come_back_from_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "compact_hits/host.cpp", "compact_hits", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for (n, per_read) in [(0usize, 16usize), (1, 16), (CHUNK_READS, 2), (1000, 4), (5003, 16)] {
        // Counts as the kernels leave them: mostly one or two, some empty, some at the slot's
        // size, some over it (the long list), some given up.
        let pick = [1, 1, 1, 2, 2, 0, per_read as i32, per_read as i32 + 1, -1, -2, -3];
        let n_hits: Vec<i32> = (0..n).map(|_| pick[(next() % pick.len() as u64) as usize]).collect();
        let slots: Vec<u64> = (0..n * per_read * 3).map(|_| next()).collect();
        let (chunk_at, packed) = run(&host, per_read, &n_hits, &slots);
        assert_eq!(chunk_at.len(), chunk_words(n));
        let total: usize = n_hits.iter().map(|&c| kept(c, per_read)).sum();
        assert_eq!((chunk_at[0] as usize, packed.len()), (total, 3 * total));
        if n > 4 * CHUNK_READS {
            assert!(chunk_at[1] > chunk_at[2], "the chunks landed out of order");
        }
        let firsts = read_firsts(&n_hits, per_read, &chunk_at[1..]);
        for (j, &c) in n_hits.iter().enumerate() {
            let words = 3 * kept(c, per_read);
            let at = firsts[j] as usize * 3;
            assert_eq!(packed[at..at + words], slots[j * per_read * 3..][..words], "read {j} of {n}, count {c}");
        }
    }
}
