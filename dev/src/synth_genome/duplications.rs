//! Segmental duplications: 10-100 kbp stretches copied at 1-5 % divergence (log-uniform) over other places,
//! half on the same chromosome nearby, half on another chromosome, about 5 % of the genome.
//! Copies are taken from the genome as it was before any duplication, so the result does not
//! depend on the order they are written in.

use super::chromosome::Chromosome;
use super::mutate::{diverged, reverse_complement};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::ops::Range;

const SHARE: f64 = 0.05;

struct Duplication {
    source: (usize, Range<usize>),
    target: (usize, usize),
    divergence: f64,
    reverse: bool,
    seed: u64,
}

/// Plans the duplications with `rng` (sequentially, so the plan is the same on any number of
/// threads), makes the copies in parallel, then writes them over their targets.
pub fn add(chromosomes: &mut [Chromosome], rng: &mut SmallRng) {
    let plan = plan(chromosomes, rng);
    let copies: Vec<Vec<u8>> = plan
        .par_iter()
        .map(|d| {
            let mut rng = SmallRng::seed_from_u64(d.seed);
            let copy = diverged(&mut rng, &chromosomes[d.source.0].seq[d.source.1.clone()], d.divergence);
            if d.reverse {
                reverse_complement(&copy)
            } else {
                copy
            }
        })
        .collect();
    for (d, copy) in plan.iter().zip(copies) {
        let seq = &mut chromosomes[d.target.0].seq;
        let end = (d.target.1 + copy.len()).min(seq.len());
        let n = end - d.target.1;
        seq[d.target.1..end].copy_from_slice(&copy[..n]);
    }
}

fn plan(chromosomes: &[Chromosome], rng: &mut SmallRng) -> Vec<Duplication> {
    let total: usize = chromosomes.iter().map(|c| c.seq.len()).sum();
    let goal = (total as f64 * SHARE) as usize;
    let mut targets: Vec<Vec<Range<usize>>> = vec![Vec::new(); chromosomes.len()];
    let mut plan = Vec::new();
    let mut placed = 0;
    let mut tries = 0;
    while placed < goal && tries < 100_000 {
        tries += 1;
        let src_chrom = pick_by_length(chromosomes, total, rng);
        let chrom_len = chromosomes[src_chrom].seq.len();
        let len = ((1e4 * 10f64.powf(rng.random::<f64>())) as usize).min(chrom_len / 10);
        if len < 1000 {
            continue;
        }
        let start = rng.random_range(0..chrom_len - len);
        let source = start..start + len;
        let (dst_chrom, dst_start) = if rng.random_bool(0.5) {
            // Nearby on the same chromosome (within 5 % of its length).
            let reach = (chrom_len / 20).max(len * 2);
            let lo = start.saturating_sub(reach);
            let hi = (start + reach).min(chrom_len - len);
            (src_chrom, rng.random_range(lo..=hi))
        } else {
            let c = pick_by_length(chromosomes, total, rng);
            let c_len = chromosomes[c].seq.len();
            if c_len <= len * 2 {
                continue;
            }
            (c, rng.random_range(0..c_len - len))
        };
        let target = dst_start..dst_start + len + len / 10;
        let clean = |c: usize, r: &Range<usize>| {
            let chrom = &chromosomes[c];
            r.end <= chrom.seq.len() && !overlaps(r, &chrom.centromere) && !chrom.seq[r.clone()].contains(&b'N')
        };
        if !clean(src_chrom, &source)
            || !clean(dst_chrom, &target)
            || overlaps(&source, &target) && src_chrom == dst_chrom
        {
            continue;
        }
        if targets[dst_chrom].iter().any(|t| overlaps(t, &target)) {
            continue;
        }
        targets[dst_chrom].push(target);
        plan.push(Duplication {
            source: (src_chrom, source),
            target: (dst_chrom, dst_start),
            divergence: 0.01 * 5f64.powf(rng.random::<f64>()), // log-uniform: recent copies commoner
            reverse: rng.random_bool(0.5),
            seed: rng.random(),
        });
        placed += len;
    }
    plan
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

fn pick_by_length(chromosomes: &[Chromosome], total: usize, rng: &mut SmallRng) -> usize {
    let mut x = rng.random_range(0..total);
    for (i, c) in chromosomes.iter().enumerate() {
        if x < c.seq.len() {
            return i;
        }
        x -= c.seq.len();
    }
    chromosomes.len() - 1
}
