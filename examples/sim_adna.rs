//! Ancient-DNA reads for the benchmark, modelled on gargammel's: merged fragments of a
//! log-normal length (median 48 bases, 30 to 90 kept), from either strand, with the
//! deamination of a double-stranded library (C->T rising to 30 % at the 5' base and G->A at the
//! 3' base, falling by a third per base, 1 % inside), Illumina-like substitutions (0.2 % rising
//! to 1 % towards the 3' end) with qualities to match, and a share of random reads (the
//! environmental DNA no reference holds: 5 % by default; real libraries often hold far more).
//! Seeded: the same seed gives the same reads whatever the threads.
//!
//! `cargo run --release --example sim_adna -- GENOME.fa N_READS SEED [RANDOM_SHARE] > reads.fq`

use std::io::{BufWriter, Write};

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rayon::prelude::*;

/// Reads drawn per chunk, each chunk with its own RNG (seed, chunk), so output is independent
/// of the threads.
const CHUNK: usize = 65_536;
const MIN_LEN: usize = 30;
const MAX_LEN: usize = 90;
const MEDIAN_LEN: f64 = 48.0;
const LEN_SIGMA: f64 = 0.35;
const TERMINAL_DAMAGE: f64 = 0.30;
const DAMAGE_DECAY: f64 = 0.65;
const INTERIOR_DAMAGE: f64 = 0.01;
const DEFAULT_RANDOM_SHARE: f64 = 0.05;

/// The genome's sequences, upper case, each kept whole (fragments never span two).
struct Genome {
    seqs: Vec<Vec<u8>>,
    /// Cumulative lengths, to draw a position uniformly over the genome.
    ends: Vec<u64>,
}

fn read_genome(path: &str) -> Result<Genome> {
    let text = std::fs::read(path).with_context(|| path.to_string())?;
    let mut seqs = Vec::new();
    for record in text.split(|&b| b == b'>').skip(1) {
        let body = record.splitn(2, |&b| b == b'\n').nth(1).unwrap_or(&[]);
        let seq: Vec<u8> = body.iter().filter(|b| !b.is_ascii_whitespace()).map(u8::to_ascii_uppercase).collect();
        if seq.len() >= MAX_LEN {
            seqs.push(seq);
        }
    }
    if seqs.is_empty() {
        bail!("{path}: no sequence of {MAX_LEN} bases or more");
    }
    let ends = seqs.iter().scan(0u64, |end, s| {
        *end += s.len() as u64;
        Some(*end)
    });
    Ok(Genome { ends: ends.collect(), seqs })
}

fn complement(b: u8) -> u8 {
    match b {
        b'A' => b'T',
        b'C' => b'G',
        b'G' => b'C',
        b'T' => b'A',
        _ => b'N',
    }
}

/// A fragment of `len` bases from a uniform position, on either strand (5' to 3').
fn fragment(genome: &Genome, len: usize, rng: &mut impl Rng) -> (String, Vec<u8>) {
    let total = *genome.ends.last().expect("a sequence");
    loop {
        let at = rng.random_range(0..total);
        let s = genome.ends.partition_point(|&e| e <= at);
        let start = (at - if s == 0 { 0 } else { genome.ends[s - 1] }) as usize;
        let seq = &genome.seqs[s];
        if start + len > seq.len() {
            continue;
        }
        let piece = &seq[start..start + len];
        if piece.iter().filter(|&&b| b == b'N').count() * 10 > len {
            continue;
        }
        let reverse = rng.random_bool(0.5);
        let bases = if reverse { piece.iter().rev().map(|&b| complement(b)).collect() } else { piece.to_vec() };
        return (format!("{}:{}:{}", s, start + 1, if reverse { '-' } else { '+' }), bases);
    }
}

/// The chance that base `i` of a `len`-base fragment was deaminated, from its 5' (C->T) or 3'
/// (G->A) end.
fn damage(i: usize, len: usize, from_3prime: bool) -> f64 {
    let d = if from_3prime { len - 1 - i } else { i };
    INTERIOR_DAMAGE.max(TERMINAL_DAMAGE * DAMAGE_DECAY.powi(d as i32))
}

fn deaminate(bases: &mut [u8], rng: &mut impl Rng) {
    let len = bases.len();
    for (i, base) in bases.iter_mut().enumerate() {
        if *base == b'C' && rng.random_bool(damage(i, len, false)) {
            *base = b'T';
        } else if *base == b'G' && rng.random_bool(damage(i, len, true)) {
            *base = b'A';
        }
    }
}

/// Sequencing errors and Phred+33 qualities: the error rate rises along the read.
fn sequence(bases: &mut [u8], rng: &mut impl Rng) -> Vec<u8> {
    let len = bases.len();
    (0..len)
        .map(|i| {
            let p = 0.002 + 0.008 * i as f64 / len as f64;
            if rng.random_bool(p) && bases[i] != b'N' {
                let others: Vec<u8> = b"ACGT".iter().copied().filter(|&b| b != bases[i]).collect();
                bases[i] = others[rng.random_range(0..3)];
            }
            let q = (-10.0 * p.log10()).round() as u8;
            33 + q.saturating_sub(rng.random_range(0..4))
        })
        .collect()
}

/// Read `id` as a FASTQ record.
fn read(genome: &Genome, id: u64, lengths: &LogNormal<f64>, random_share: f64, rng: &mut impl Rng) -> Vec<u8> {
    let len = loop {
        let l = lengths.sample(rng).round() as usize;
        if (MIN_LEN..=MAX_LEN).contains(&l) {
            break l;
        }
    };
    let (origin, mut bases) = if rng.random_bool(random_share) {
        ("random".to_string(), (0..len).map(|_| b"ACGT"[rng.random_range(0..4)]).collect())
    } else {
        let (origin, mut bases) = fragment(genome, len, rng);
        deaminate(&mut bases, rng);
        (origin, bases)
    };
    let qual = sequence(&mut bases, rng);
    let mut out = format!("@adna_{id}_{origin}_{len}\n").into_bytes();
    out.extend_from_slice(&bases);
    out.extend_from_slice(b"\n+\n");
    out.extend_from_slice(&qual);
    out.push(b'\n');
    out
}

fn chunk(genome: &Genome, seed: u64, random_share: f64, index: usize, n: usize) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index as u64);
    let lengths = LogNormal::new(MEDIAN_LEN.ln(), LEN_SIGMA).expect("valid log-normal");
    (0..n).flat_map(|j| read(genome, (index * CHUNK + j) as u64, &lengths, random_share, &mut rng)).collect()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, n, seed, share) = match &args[..] {
        [path, n, seed] => (path, n, seed, None),
        [path, n, seed, share] => (path, n, seed, Some(share)),
        _ => bail!("usage: sim_adna GENOME.fa N_READS SEED [RANDOM_SHARE] > reads.fq"),
    };
    let (n, seed): (usize, u64) = (n.parse().context("N_READS")?, seed.parse().context("SEED")?);
    let random_share = match share {
        Some(s) => {
            s.parse::<f64>().ok().filter(|x| (0.0..=1.0).contains(x)).context("RANDOM_SHARE: a fraction in 0..=1")?
        }
        None => DEFAULT_RANDOM_SHARE,
    };
    let genome = read_genome(path)?;
    let mut out = BufWriter::with_capacity(1 << 22, std::io::stdout().lock());
    // In rounds of a few chunks per thread, so memory stays bounded and output is in order.
    let per_round = rayon::current_num_threads() * 4;
    let chunks = n.div_ceil(CHUNK);
    for round in (0..chunks).step_by(per_round) {
        let texts: Vec<Vec<u8>> = (round..chunks.min(round + per_round))
            .into_par_iter()
            .map(|c| chunk(&genome, seed, random_share, c, CHUNK.min(n - c * CHUNK)))
            .collect();
        for t in texts {
            out.write_all(&t)?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn genome() -> Genome {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let seq: Vec<u8> = (0..200_000).map(|_| b"ACGT"[rng.random_range(0..4)]).collect();
        Genome { ends: vec![seq.len() as u64], seqs: vec![seq] }
    }

    fn records(text: &[u8]) -> Vec<(String, Vec<u8>)> {
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        lines
            .chunks(4)
            .filter(|r| r.len() == 4)
            .map(|r| (String::from_utf8(r[0].to_vec()).unwrap(), r[1].to_vec()))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_reads_and_lengths_stay_in_range() {
        let g = genome();
        let a = chunk(&g, 7, DEFAULT_RANDOM_SHARE, 0, 2000);
        assert_eq!(a, chunk(&g, 7, DEFAULT_RANDOM_SHARE, 0, 2000));
        assert_ne!(a, chunk(&g, 8, DEFAULT_RANDOM_SHARE, 0, 2000));
        let reads = records(&a);
        assert_eq!(reads.len(), 2000);
        assert!(reads.iter().all(|(_, s)| (MIN_LEN..=MAX_LEN).contains(&s.len())));
        let mean = reads.iter().map(|(_, s)| s.len()).sum::<usize>() as f64 / 2000.0;
        assert!((44.0..56.0).contains(&mean), "mean length {mean}");
    }

    /// The random share is what was asked: none, the default's, or most reads.
    #[test]
    fn the_random_share_follows_the_argument() {
        let g = genome();
        let share = |s: f64| {
            let reads = records(&chunk(&g, 5, s, 0, 4000));
            reads.iter().filter(|(n, _)| n.contains("_random_")).count() as f64 / reads.len() as f64
        };
        assert_eq!(share(0.0), 0.0);
        assert!((0.03..0.07).contains(&share(DEFAULT_RANDOM_SHARE)));
        assert!((0.85..0.95).contains(&share(0.9)));
    }

    /// C->T at the 5' base is far above the middle's, as in ancient DNA: measured against the
    /// reference base of each forward-strand read.
    #[test]
    fn reads_carry_deamination_at_their_ends() {
        let g = genome();
        let reads = records(&chunk(&g, 3, DEFAULT_RANDOM_SHARE, 0, 20_000));
        let (mut c_first, mut t_first, mut c_mid, mut t_mid) = (0, 0, 0, 0);
        for (name, s) in reads.iter().filter(|(n, _)| n.contains(":+_")) {
            let start: usize = name.split(':').nth(1).unwrap().parse::<usize>().unwrap() - 1;
            let reference = &g.seqs[0][start..start + s.len()];
            let mid = s.len() / 2;
            for (i, c_count, t_count) in [(0, &mut c_first, &mut t_first), (mid, &mut c_mid, &mut t_mid)] {
                if reference[i] == b'C' {
                    *c_count += 1;
                    *t_count += (s[i] == b'T') as usize;
                }
            }
        }
        let (first, middle) = (t_first as f64 / c_first as f64, t_mid as f64 / c_mid as f64);
        assert!(first > 0.2 && first < 0.4, "C->T at the 5' base: {first}");
        assert!(middle < 0.05, "C->T in the middle: {middle}");
    }
}
