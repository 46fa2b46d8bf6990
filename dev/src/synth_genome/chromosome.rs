//! One human-like chromosome: telomeres, arms of GC isochores filled with interspersed repeat
//! copies and microsatellites between stretches of unique sequence, small N gaps, and a
//! centromere of alpha-satellite higher-order repeats around an N gap.

use super::families::Family;
use super::mutate::{diverged, diverged_into, random_bases};
use rand::rngs::SmallRng;
use rand::Rng;
use std::ops::Range;

/// Fraction of the arms covered by microsatellites (human: ~3 %).
const STR_SHARE: f64 = 0.03;
const STR_MEAN_LEN: f64 = 55.0;
/// Divergence of alpha-satellite higher-order repeat copies from their unit.
const ALPHA_DIVERGENCE: Range<f64> = 0.002..0.015;
/// Small assembly gaps in the arms, one per this many bases on average.
const SMALL_GAP_EVERY: f64 = 5e6;

pub struct ChromosomePlan {
    pub len: usize,
    /// Centromere position as a fraction of the length (human-like per chromosome).
    pub centromere_at: f64,
    /// Acrocentric chromosomes (13, 14, 15, 21, 22): the short arm is mostly a gap.
    pub acrocentric: bool,
    /// The chromosome's alpha-satellite higher-order repeat unit.
    pub hor_unit: Vec<u8>,
}

pub struct Chromosome {
    pub seq: Vec<u8>,
    /// Satellite arrays and the centromeric gap: duplications are not placed there.
    pub centromere: Range<usize>,
    /// Bases inserted per family (microsatellites last), for the composition report.
    pub family_bases: Vec<usize>,
}

pub fn build(plan: &ChromosomePlan, families: &[Family], rng: &mut SmallRng) -> Chromosome {
    let len = plan.len;
    let telomere_gap = (len / 100).min(10_000);
    let telomere_repeat = (len / 200).min(rng.random_range(3_000..8_000));
    let alpha_len = ((len as f64 * rng.random_range(0.015..0.03)) as usize).clamp((len / 20).min(100_000), 5_000_000);
    let centromere_gap = (len / 100).min(3_000_000);
    let hsat_len = alpha_len / 4;
    let centromere_len = alpha_len + centromere_gap + hsat_len;
    let fixed = 2 * (telomere_gap + telomere_repeat) + centromere_len;
    let arms = len.saturating_sub(fixed);
    let p_arm = ((len as f64 * plan.centromere_at) as usize)
        .saturating_sub(telomere_gap + telomere_repeat + centromere_len / 2)
        .min(arms);
    let q_arm = arms - p_arm;

    let mut filler = ArmFiller::new(families, rng);
    let mut seq = Vec::with_capacity(len + 10_000);
    seq.extend(std::iter::repeat_n(b'N', telomere_gap));
    tandem(rng, b"CCCTAA", telomere_repeat, 0.0..0.02, &mut seq);
    if plan.acrocentric {
        let gap = p_arm * 4 / 5;
        seq.extend(std::iter::repeat_n(b'N', gap));
        filler.fill(rng, p_arm - gap, &mut seq);
    } else {
        filler.fill(rng, p_arm, &mut seq);
    }
    let centromere_start = seq.len();
    tandem(rng, &plan.hor_unit, alpha_len / 2, ALPHA_DIVERGENCE, &mut seq);
    seq.extend(std::iter::repeat_n(b'N', centromere_gap));
    tandem(rng, &plan.hor_unit, alpha_len - alpha_len / 2, ALPHA_DIVERGENCE, &mut seq);
    tandem(rng, b"ATTCC", hsat_len, 0.05..0.15, &mut seq);
    let centromere = centromere_start..seq.len();
    filler.fill(rng, q_arm, &mut seq);
    tandem(rng, b"TTAGGG", telomere_repeat, 0.0..0.02, &mut seq);
    seq.extend(std::iter::repeat_n(b'N', telomere_gap));
    seq.resize(len, b'N');
    Chromosome { seq, centromere, family_bases: filler.family_bases }
}

/// Appends `len` bases of `unit` repeated, each copy diverged from it at a rate drawn from
/// `divergence` (cut to length). Alpha-satellite arrays use 0.2-1.5 %, so reads from them
/// match many places nearly equally well.
fn tandem(rng: &mut SmallRng, unit: &[u8], len: usize, divergence: Range<f64>, out: &mut Vec<u8>) {
    let end = out.len() + len;
    while out.len() < end {
        let rate = rng.random_range(divergence.clone());
        diverged_into(rng, unit, rate, out);
    }
    out.truncate(end);
}

/// Fills chromosome arms: unique sequence at the current isochore's GC, each stretch
/// followed by one repeat copy or microsatellite, chosen by the families' shares (weighted
/// by their GC preference), so the shares hold on average.
struct ArmFiller<'a> {
    families: &'a [Family],
    /// Copies per base of unique sequence, per family, then microsatellites last.
    rates: Vec<f64>,
    mean_unique_len: f64,
    isochore_left: usize,
    gc: f64,
    weights: Vec<f64>,
    family_bases: Vec<usize>,
}

impl<'a> ArmFiller<'a> {
    fn new(families: &'a [Family], rng: &mut SmallRng) -> Self {
        let mut rates: Vec<f64> = families.iter().map(|f| f.share / f.mean_copy_len).collect();
        rates.push(STR_SHARE / STR_MEAN_LEN);
        let repeat_share: f64 = families.iter().map(|f| f.share).sum::<f64>() + STR_SHARE;
        let mean_unique_len = (1.0 - repeat_share) / rates.iter().sum::<f64>();
        let family_bases = vec![0; rates.len()];
        let mut filler = ArmFiller {
            families,
            rates,
            mean_unique_len,
            isochore_left: 0,
            gc: 0.41,
            weights: Vec::new(),
            family_bases,
        };
        filler.next_isochore(rng);
        filler
    }

    /// Isochores of 100 kbp - 1 Mbp (log-uniform) with GC 35-55 %, most near 40 %.
    fn next_isochore(&mut self, rng: &mut SmallRng) {
        self.isochore_left = (1e5 * 10f64.powf(rng.random::<f64>())) as usize;
        let centred: f64 = (0..4).map(|_| rng.random::<f64>()).sum::<f64>() / 4.0 - 0.5;
        self.gc = (0.41 + centred * 0.16 + if rng.random_bool(0.15) { 0.06 } else { 0.0 }).clamp(0.35, 0.55);
        let pref = |i: usize| self.families.get(i).map_or(0.0, |f| f.gc_preference);
        self.weights =
            self.rates.iter().enumerate().map(|(i, r)| r * (pref(i) * (self.gc - 0.41) * 12.0).exp()).collect();
    }

    fn fill(&mut self, rng: &mut SmallRng, n: usize, out: &mut Vec<u8>) {
        let end = out.len() + n;
        while out.len() < end {
            let u: f64 = rng.random::<f64>().max(1e-12);
            let unique = ((-u.ln() * self.mean_unique_len) as usize).min(self.isochore_left).max(1);
            random_bases(rng, unique, self.gc, out);
            self.isochore_left -= unique;
            if self.isochore_left == 0 {
                self.next_isochore(rng);
            }
            if rng.random_bool((unique as f64 / SMALL_GAP_EVERY).min(1.0)) {
                let gap = (100.0 * 500f64.powf(rng.random::<f64>())) as usize;
                out.extend(std::iter::repeat_n(b'N', gap));
            }
            let pick = self.pick(rng);
            let before = out.len();
            match self.families.get(pick) {
                Some(family) => out.extend(family.copy(rng)),
                None => microsatellite(rng, out),
            }
            self.family_bases[pick] += out.len() - before;
        }
        out.truncate(end);
    }

    fn pick(&self, rng: &mut SmallRng) -> usize {
        let mut x = rng.random::<f64>() * self.weights.iter().sum::<f64>();
        for (i, w) in self.weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        self.weights.len() - 1
    }
}

/// A short tandem repeat: a 1-6 bp unit (mono- and dinucleotides commonest), 15-150 bp long,
/// with a few impure copies.
fn microsatellite(rng: &mut SmallRng, out: &mut Vec<u8>) {
    let unit_len = [1, 1, 1, 2, 2, 2, 3, 4, 4, 5, 6][rng.random_range(0..11)];
    let mut unit = Vec::new();
    random_bases(rng, unit_len, 0.35, &mut unit);
    let len = (15.0 * 10f64.powf(rng.random::<f64>())) as usize;
    let pure: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
    let impurity = rng.random_range(0.0..0.08);
    out.extend(diverged(rng, &pure, impurity));
}
