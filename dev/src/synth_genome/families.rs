//! The interspersed repeat families of the human-like genome: consensus sequences, their
//! subfamilies (each derived from an older one, so young and old copies share sequence) and
//! how a copy is cut from its consensus when it is inserted.

use super::mutate::{diverged, random_bases, reverse_complement};
use rand::rngs::SmallRng;
use rand::Rng;

/// How an inserted copy relates to its consensus.
#[derive(Clone, Copy, Debug)]
pub enum CopyShape {
    /// Almost the whole consensus, then a poly-A tail (Alu).
    WholeWithPolyA,
    /// The 3' end only, most copies short, a few full length, then a poly-A tail (L1).
    FivePrimeTruncated,
    /// A random stretch of 30-100 % of the consensus (MIR, L2, DNA transposons).
    Fragment,
    /// A solo LTR most of the time, else LTR + internal part + LTR (endogenous retrovirus).
    Retrovirus { ltr_len: usize },
}

pub struct Family {
    pub name: &'static str,
    pub consensus: Vec<u8>,
    pub shape: CopyShape,
    /// Copies differ from the consensus by this range of rates (young subfamilies low).
    pub divergence: (f64, f64),
    /// Target fraction of the chromosome arms covered by copies of this family.
    pub share: f64,
    /// How strongly the family prefers GC-rich isochores (Alu > 0) or AT-rich ones (L1 < 0).
    pub gc_preference: f64,
    /// Mean copy length, measured on sample copies, to turn the share into a copy rate.
    pub mean_copy_len: f64,
}

impl Family {
    /// One inserted copy, on a random strand.
    pub fn copy(&self, rng: &mut SmallRng) -> Vec<u8> {
        let rate = rng.random_range(self.divergence.0..=self.divergence.1);
        let c = &self.consensus;
        let template: Vec<u8> = match self.shape {
            CopyShape::WholeWithPolyA => {
                let start = rng.random_range(0..=c.len() / 30);
                let mut t = c[start..].to_vec();
                t.extend(std::iter::repeat_n(b'A', rng.random_range(8..=40)));
                t
            }
            CopyShape::FivePrimeTruncated => {
                let len = if rng.random_bool(0.05) {
                    c.len()
                } else {
                    // Exponential lengths with mean ~1 kbp, as reverse transcription stops early.
                    let u: f64 = rng.random::<f64>().max(1e-12);
                    ((-u.ln() * 1000.0) as usize).clamp(60, c.len())
                };
                let mut t = c[c.len() - len..].to_vec();
                t.extend(std::iter::repeat_n(b'A', rng.random_range(5..=30)));
                t
            }
            CopyShape::Fragment => {
                let len = (c.len() as f64 * rng.random_range(0.3..=1.0)) as usize;
                let start = rng.random_range(0..=c.len() - len);
                c[start..start + len].to_vec()
            }
            CopyShape::Retrovirus { ltr_len } => {
                if rng.random_bool(0.85) {
                    c[..ltr_len].to_vec()
                } else {
                    let mut t = c.clone();
                    t.extend_from_slice(&c[..ltr_len]);
                    t
                }
            }
        };
        let copy = diverged(rng, &template, rate);
        if rng.random_bool(0.5) {
            reverse_complement(&copy)
        } else {
            copy
        }
    }
}

/// A subfamily: its name, the family it derives from (index into the list built so far, or
/// None for a root), how far its consensus moved from the parent, its copies' divergence and
/// its share of the genome.
struct Sub {
    name: &'static str,
    parent: Option<usize>,
    drift: f64,
    divergence: (f64, f64),
    share: f64,
}

const fn sub(name: &'static str, parent: Option<usize>, drift: f64, divergence: (f64, f64), share: f64) -> Sub {
    Sub { name, parent, drift, divergence, share }
}

/// All families, with human-like genome shares (Alu ~10 %, L1 ~17 %, MIR, L2, DNA transposons
/// and LTR elements less).
pub fn human_like(rng: &mut SmallRng) -> Vec<Family> {
    let mut families = Vec::new();

    // Alu: a dimer of two related ~120 bp arms joined by an A-rich linker, GC-rich.
    let left = bases(rng, 120, 0.58);
    let mut alu = left.clone();
    alu.extend_from_slice(b"AAAAATACAAAAA");
    alu.extend(diverged(rng, &left, 0.15));
    alu.extend(bases(rng, 31, 0.55));
    let alu_tree = [
        sub("AluJo", None, 0.0, (0.14, 0.20), 0.009),
        sub("AluJb", Some(0), 0.03, (0.14, 0.20), 0.007),
        sub("AluSx", Some(0), 0.03, (0.08, 0.13), 0.030),
        sub("AluSq", Some(2), 0.015, (0.07, 0.11), 0.012),
        sub("AluSp", Some(2), 0.015, (0.07, 0.11), 0.012),
        sub("AluSg", Some(2), 0.015, (0.06, 0.10), 0.013),
        sub("AluY", Some(5), 0.015, (0.02, 0.06), 0.012),
        sub("AluYa5", Some(6), 0.008, (0.005, 0.025), 0.003),
        sub("AluYb8", Some(6), 0.008, (0.005, 0.025), 0.002),
    ];
    derive_tree(rng, &mut families, &alu, &alu_tree, CopyShape::WholeWithPolyA, 1.0);

    // L1: ~6 kbp: GC-rich 5' UTR, two A-rich ORFs, 3' UTR; AT-rich isochores.
    let mut l1 = bases(rng, 900, 0.55);
    l1.extend(bases(rng, 1050, 0.40));
    l1.extend(bases(rng, 60, 0.35));
    l1.extend(bases(rng, 3850, 0.38));
    l1.extend(bases(rng, 200, 0.40));
    let l1_tree = [
        sub("L1M", None, 0.0, (0.18, 0.25), 0.062),
        sub("L1PB", Some(0), 0.05, (0.12, 0.18), 0.050),
        sub("L1PA_old", Some(1), 0.04, (0.07, 0.12), 0.050),
        sub("L1PA_young", Some(2), 0.02, (0.03, 0.07), 0.025),
        sub("L1HS", Some(3), 0.01, (0.002, 0.015), 0.005),
    ];
    derive_tree(rng, &mut families, &l1, &l1_tree, CopyShape::FivePrimeTruncated, -1.0);

    let mut add = |name, consensus, shape, divergence, share| {
        families.push(Family { name, consensus, shape, divergence, share, gc_preference: 0.0, mean_copy_len: 0.0 });
    };
    add("MIR", bases(rng, 262, 0.48), CopyShape::Fragment, (0.24, 0.32), 0.025);
    add("L2", bases(rng, 3300, 0.44), CopyShape::Fragment, (0.22, 0.30), 0.030);
    add("Charlie", bases(rng, 2500, 0.40), CopyShape::Fragment, (0.15, 0.25), 0.012);
    add("MER", bases(rng, 900, 0.42), CopyShape::Fragment, (0.12, 0.22), 0.010);
    add("Tigger", bases(rng, 1400, 0.40), CopyShape::Fragment, (0.12, 0.20), 0.008);
    for (name, ltr_len, internal, divergence, share) in [
        ("ERV1", 550, 6500, (0.08, 0.18), 0.028),
        ("ERVL", 450, 5500, (0.12, 0.20), 0.022),
        ("MaLR", 350, 1500, (0.10, 0.18), 0.020),
        ("ERVK", 950, 8500, (0.02, 0.06), 0.004),
    ] {
        let mut c = bases(rng, ltr_len, 0.45);
        c.extend(bases(rng, internal, 0.42));
        add(name, c, CopyShape::Retrovirus { ltr_len }, divergence, share);
    }

    for f in &mut families {
        f.mean_copy_len = (0..400).map(|_| f.copy(rng).len() as f64).sum::<f64>() / 400.0;
    }
    families
}

fn derive_tree(
    rng: &mut SmallRng,
    out: &mut Vec<Family>,
    root: &[u8],
    tree: &[Sub],
    shape: CopyShape,
    gc_preference: f64,
) {
    let first = out.len();
    for s in tree {
        let consensus = match s.parent {
            None => root.to_vec(),
            Some(p) => diverged(rng, &out[first + p].consensus, s.drift),
        };
        out.push(Family {
            name: s.name,
            consensus,
            shape,
            divergence: s.divergence,
            share: s.share,
            gc_preference,
            mean_copy_len: 0.0,
        });
    }
}

fn bases(rng: &mut SmallRng, n: usize, gc: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    random_bases(rng, n, gc, &mut v);
    v
}

/// The 171 bp alpha-satellite monomer all centromeric arrays derive from (AT-rich).
pub fn alpha_monomer(rng: &mut SmallRng) -> Vec<u8> {
    bases(rng, 171, 0.38)
}

/// A chromosome's higher-order repeat: `k` monomers, each 15-25 % from the ancestral
/// monomer (so the monomers within a unit differ from each other, as in real HORs).
pub fn higher_order_unit(rng: &mut SmallRng, monomer: &[u8], k: usize) -> Vec<u8> {
    let mut unit = Vec::with_capacity(k * monomer.len());
    for _ in 0..k {
        let rate = rng.random_range(0.15..0.25);
        unit.extend(diverged(rng, monomer, rate));
    }
    unit
}
