//! cuda/unpack_codes.cu built for the CPU (unpack_codes/host.cpp): the codes it lays out from
//! exact_match's packed reads, in either layout, are every inexact read's aligned codes back to
//! back, as `HostBatch` places them. Skipped without a C++ compiler (`CXX`, else `c++`).

mod common;

use bcuda::gpu::HostBatch;
use bcuda::reads::{ReadBatch, ReadOptions};
use bcuda::sai::GapOptions;
use bcuda::search::seeded::xorshift;

/// The kernel's codes for batch `b`.
fn run(host: &std::path::Path, b: &HostBatch) -> Vec<u8> {
    let (words, n) = (&b.exact_words, b.gpu_reads.len());
    let mut input = format!("{} {} {n} {}\n", words.len(), b.exact_starts.len(), b.stride as i32);
    words.iter().for_each(|w| input += &format!("{w} "));
    b.exact_starts.iter().for_each(|s| input += &format!("{s} "));
    for j in 0..n {
        input += &format!("{} {} {} ", b.gpu_reads[j], b.starts[j], b.gpu_lens[j]);
    }
    common::run_host(host, &input).split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn the_inexact_reads_codes_come_from_the_packed_reads() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "unpack_codes/host.cpp", "unpack_codes", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let opts = ReadOptions { sequence_only: true, ..Default::default() };
    for n in [1usize, 31, 33, 100, 517] {
        let mut batch = ReadBatch::default();
        for _ in 0..n {
            // Lengths across word and group boundaries, some empty, some over the GPU's limit
            // (the GPU does not take those), bases with N.
            let len = match next() % 10 {
                0 => 0,
                1 => 600,
                _ => 1 + (next() % 130) as usize,
            };
            let bases: Vec<u8> = (0..len).map(|_| b"ACGTN"[(next() % 5) as usize]).collect();
            batch.push(b"r", &bases, &[], len, opts);
        }
        for stride in [false, true] {
            let b = HostBatch::new(&batch, &GapOptions::default(), stride);
            assert!(b.gpu_reads.len() < n || n < 10, "some reads are left to the CPU");
            let want: Vec<u8> = b.gpu_reads.iter().flat_map(|&i| batch.aligned(i as usize).to_vec()).collect();
            assert_eq!(want.len(), b.n_codes);
            assert_eq!(run(&host, &b), want, "{n} reads, stride {stride}");
        }
    }
}
