//! `bcuda-dev synth-genome`: a seeded synthetic genome for benchmarks, written as FASTA
//! to stdout. `--human-like` gives a genome whose repeats make aligners work as on a human one
//! (interspersed repeat families, satellites, segmental duplications, microsatellites, GC
//! isochores, N gaps); without it, the same 24 chromosomes of uniform random sequence, a
//! repeat-free baseline. Same seed, same bytes, on any number of threads: every chromosome
//! has its own random stream, derived from the seed and its number.

mod chromosome;
mod duplications;
mod families;
mod mutate;

use anyhow::{bail, Result};
use chromosome::{Chromosome, ChromosomePlan};
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::io::Write;

#[derive(Args, Debug)]
pub struct SynthGenomeArgs {
    /// Total length in Mbp, shared among 24 chromosomes in human proportions.
    #[arg(long)]
    pub size_mbp: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Human-like repeats; without it, uniform random sequence.
    #[arg(long)]
    pub human_like: bool,
    /// Threads (default and most: all cores); the output does not depend on it.
    #[arg(short = 't', long, allow_negative_numbers = true, value_parser = bcuda::option_values::positive_count)]
    pub threads: Option<usize>,
}

/// GRCh38 chromosome lengths in Mbp and centromere positions (fraction of the length);
/// acrocentric ones have their centromere near the start.
const HUMAN: [(&str, f64, f64); 24] = [
    ("chr1", 248.96, 0.50),
    ("chr2", 242.19, 0.39),
    ("chr3", 198.30, 0.46),
    ("chr4", 190.21, 0.26),
    ("chr5", 181.54, 0.27),
    ("chr6", 170.81, 0.35),
    ("chr7", 159.35, 0.38),
    ("chr8", 145.14, 0.31),
    ("chr9", 138.39, 0.33),
    ("chr10", 133.80, 0.30),
    ("chr11", 135.09, 0.39),
    ("chr12", 133.28, 0.27),
    ("chr13", 114.36, 0.15),
    ("chr14", 107.04, 0.16),
    ("chr15", 101.99, 0.18),
    ("chr16", 90.34, 0.41),
    ("chr17", 83.26, 0.30),
    ("chr18", 80.37, 0.23),
    ("chr19", 58.62, 0.45),
    ("chr20", 64.44, 0.46),
    ("chr21", 46.71, 0.26),
    ("chr22", 50.82, 0.28),
    ("chrX", 156.04, 0.39),
    ("chrY", 57.23, 0.18),
];
const ACROCENTRIC: [&str; 5] = ["chr13", "chr14", "chr15", "chr21", "chr22"];
/// Acrocentric pairs that share their centromeric higher-order repeat (as 13/21 and 14/22 do).
const SHARED_HOR: [(&str, &str); 2] = [("chr21", "chr13"), ("chr22", "chr14")];

/// Independent random streams: one for the shared material, one per chromosome.
fn stream(seed: u64, index: u64) -> SmallRng {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    SmallRng::seed_from_u64(z ^ (z >> 31))
}
const SHARED_STREAM: u64 = 1000;

pub fn run(args: SynthGenomeArgs) -> Result<()> {
    if args.size_mbp.is_nan() || args.size_mbp <= 0.0 {
        bail!("--size-mbp must be positive");
    }
    let threads = args.threads.map_or(0, |t| bcuda::threads::capped("synth-genome", t, false));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let chromosomes = pool.install(|| generate(args.size_mbp, args.seed, args.human_like));
    let kind = if args.human_like { "human-like" } else { "uniform random" };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for ((name, _, _), chrom) in HUMAN.iter().zip(&chromosomes) {
        writeln!(out, ">{name} synthetic {kind} seed={}", args.seed)?;
        for line in chrom.chunks(60) {
            out.write_all(line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The 24 chromosomes' sequences.
pub fn generate(size_mbp: f64, seed: u64, human_like: bool) -> Vec<Vec<u8>> {
    let total = (size_mbp * 1e6).round() as usize;
    let human_total: f64 = HUMAN.iter().map(|c| c.1).sum();
    let mut lens: Vec<usize> = HUMAN.iter().map(|c| ((c.1 / human_total * total as f64) as usize).max(1)).collect();
    lens[0] += total.saturating_sub(lens.iter().sum());
    if !human_like {
        return lens
            .par_iter()
            .enumerate()
            .map(|(i, &len)| {
                let mut seq = Vec::with_capacity(len);
                mutate::random_bases(&mut stream(seed, i as u64), len, 0.5, &mut seq);
                seq
            })
            .collect();
    }
    let mut shared = stream(seed, SHARED_STREAM);
    let families = families::human_like(&mut shared);
    let monomer = families::alpha_monomer(&mut shared);
    let mut hor_units: Vec<Vec<u8>> = Vec::new();
    for (name, _, _) in HUMAN {
        let unit = match SHARED_HOR.iter().find(|(c, _)| *c == name) {
            Some((_, from)) => {
                let from = HUMAN.iter().position(|c| c.0 == *from).expect("chromosome in table");
                mutate::diverged(&mut shared, &hor_units[from], 0.01)
            }
            None => {
                let k = shared.random_range(4..=16);
                families::higher_order_unit(&mut shared, &monomer, k)
            }
        };
        hor_units.push(unit);
    }
    let mut chromosomes: Vec<Chromosome> = HUMAN
        .par_iter()
        .zip(lens)
        .zip(hor_units)
        .enumerate()
        .map(|(i, ((&(name, _, centromere_at), len), hor_unit))| {
            let plan = ChromosomePlan { len, centromere_at, acrocentric: ACROCENTRIC.contains(&name), hor_unit };
            chromosome::build(&plan, &families, &mut stream(seed, i as u64))
        })
        .collect();
    report_composition(&families, &chromosomes, total);
    duplications::add(&mut chromosomes, &mut shared);
    chromosomes.into_iter().map(|c| c.seq).collect()
}

/// One stderr line: each family's share of the genome (before segmental duplications).
fn report_composition(families: &[families::Family], chromosomes: &[Chromosome], total: usize) {
    let mut bases = vec![0usize; families.len() + 1];
    for c in chromosomes {
        bases.iter_mut().zip(&c.family_bases).for_each(|(b, n)| *b += n);
    }
    let names = families.iter().map(|f| f.name).chain(["microsatellites"]);
    let shares: Vec<String> =
        names.zip(&bases).map(|(name, n)| format!("{name} {:.2}%", 100.0 * *n as f64 / total as f64)).collect();
    eprintln!("[bcuda-dev synth-genome] repeats: {}", shares.join(", "));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_threads(n: usize, human_like: bool) -> Vec<Vec<u8>> {
        rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| generate(3.0, 7, human_like))
    }

    #[test]
    fn same_seed_same_genome_on_any_thread_count() {
        for human_like in [false, true] {
            let one = on_threads(1, human_like);
            assert_eq!(one, on_threads(3, human_like));
            assert_eq!(one.len(), 24);
            assert_eq!(one.iter().map(Vec::len).sum::<usize>(), 3_000_000);
        }
        assert_ne!(generate(3.0, 7, true), generate(3.0, 8, true));
    }

    #[test]
    fn human_like_has_gaps_and_plausible_gc() {
        let genome = generate(20.0, 1, true);
        let all: Vec<u8> = genome.concat();
        let n = all.iter().filter(|&&b| b == b'N').count() as f64 / all.len() as f64;
        let acgt = all.len() as f64 * (1.0 - n);
        let gc = all.iter().filter(|&&b| b == b'G' || b == b'C').count() as f64 / acgt;
        assert!((0.01..0.10).contains(&n), "N fraction {n}");
        assert!((0.37..0.46).contains(&gc), "GC {gc}");
        assert!(all.iter().all(|b| b"ACGTN".contains(b)));
    }
}
