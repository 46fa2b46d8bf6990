//! Times the GPU path's CPU stages without a GPU: packing the FASTA, and the refinement of
//! tied 64-base keys (`chunk_sort::refine_ties`) on chunks sorted by their keys here, as the
//! GPU leaves them (equal keys in an arbitrary order, the tie flags set). Prints a checksum of
//! the refined chunks, so that two builds of the code can be compared for identical rows.
//!
//! `cargo run --release -p bcuda-index --example refine_bench -- genome.fa [sort-memory GiB]`

use std::path::Path;
use std::time::Instant;

use bcuda_index::build::pack_fasta;
use bcuda_index::chunk_sort::{key_64, plan_chunks, refine_ties, slot_of, TIED};
use bcuda_index::difference_cover::{CoverRanks, DEFAULT_COVER_ROOT};
use bcuda_index::suffix_sort::bucket_bases;
use bcuda_index::text::PackedText;
use rayon::prelude::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let fasta = args.next().expect("usage: refine_bench genome.fa [sort-memory GiB]");
    let budget_gib: f64 = args.next().map_or(2.0, |s| s.parse().expect("a number of GiB"));
    let t = Instant::now();
    let reference = pack_fasta(Path::new(&fasta)).expect("readable FASTA");
    let pack_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let text = PackedText::with_reverse_complement(&reference.forward);
    let rc_s = t.elapsed().as_secs_f64();
    drop(reference);
    let n = text.len();
    let t = Instant::now();
    let cover = CoverRanks::build(&text, DEFAULT_COVER_ROOT);
    let cover_s = t.elapsed().as_secs_f64();
    let k = bucket_bases(n);
    let mut starts = vec![0u64; (1 << (2 * k)) + 1];
    for b in text.kmer_codes(k) {
        starts[b as usize + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    // Two chunks in flight with a sorter: each gets half of the budget.
    let plan = plan_chunks(&starts, (budget_gib * (1u64 << 30) as f64) as u64 / 16);
    println!(
        "n {n}, packing {pack_s:.2} s, reverse complement {rc_s:.2} s, cover {cover_s:.2} s, {} chunks",
        plan.len()
    );
    let (mut refine_s, mut tied, mut runs, mut checksum) = (0.0, 0u64, 0u64, 0u64);
    for &(lo, hi) in &plan {
        let (base, end) = (starts[lo], starts[hi]);
        // REFINE_CACHE=dir keeps the chunks as sorted before refinement, for repeated runs.
        let cached = std::env::var_os("REFINE_CACHE").map(|d| Path::new(&d).join(format!("chunk-{n}-{lo}-{hi}.bin")));
        let mut slots = match cached.as_ref().and_then(|f| std::fs::read(f).ok()) {
            Some(bytes) => bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect(),
            None => {
                let slots = sorted_by_keys(&text, k, lo, hi, end - base);
                if let Some(f) = &cached {
                    std::fs::write(f, slots.iter().flat_map(|s| s.to_le_bytes()).collect::<Vec<u8>>())
                        .expect("writable cache");
                }
                slots
            }
        };
        tied += slots.par_iter().filter(|&&s| s & TIED != 0).count() as u64;
        runs += slots.par_windows(2).filter(|w| w[1] & TIED != 0 && w[0] & TIED == 0).count() as u64;
        let t = Instant::now();
        refine_ties(&cover, &mut slots);
        refine_s += t.elapsed().as_secs_f64();
        checksum = slots.iter().fold(checksum, |h, &s| (h ^ s).wrapping_mul(0x100_0000_01B3));
    }
    println!("refine {refine_s:.2} s ({tied} tied slots in {runs} runs); checksum {checksum:016x}");
}

/// The chunk of buckets lo..hi sorted by its 64-base keys, equal keys in a scrambled order
/// (the GPU leaves them in any order), tie flags set.
fn sorted_by_keys(text: &PackedText, k: u32, lo: usize, hi: usize, len: u64) -> Vec<u64> {
    let n = text.len();
    {
        let mut keyed: Vec<(u128, u64)> = (0..n)
            .into_par_iter()
            .filter(|&i| (lo..hi).contains(&((text.window(i) >> (64 - 2 * k)) as usize)))
            .map(|p| (key_64(text, p), p))
            .collect();
        assert_eq!(keyed.len() as u64, len);
        // Equal keys in a scrambled order (the GPU leaves them in any order).
        keyed.par_sort_unstable_by_key(|&(key, p)| (key, p.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        (0..keyed.len())
            .into_par_iter()
            .map(|j| slot_of(text, keyed[j].1) | if j > 0 && keyed[j].0 == keyed[j - 1].0 { TIED } else { 0 })
            .collect()
    }
}
