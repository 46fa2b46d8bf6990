//! Sequence evolution for the synthetic genome: random sequence at a GC content, reverse
//! complements, and diverged copies (substitutions with transitions twice as common as
//! transversions, plus small indels), as copies of a repeat accumulate them over time.

use rand::rngs::SmallRng;
use rand::Rng;

/// One difference in this many is a small insertion or deletion rather than a substitution
/// (roughly the ratio seen in old human repeat copies).
const INDEL_EVERY: u32 = 8;

/// `n` random bases with GC fraction `gc`, appended to `out`. Two bases per 64-bit draw.
pub fn random_bases(rng: &mut SmallRng, n: usize, gc: f64, out: &mut Vec<u8>) {
    let gc_threshold = (gc.clamp(0.0, 1.0) * 65536.0) as u32;
    out.reserve(n);
    let mut left = n;
    while left > 0 {
        let word = rng.random::<u64>();
        for half in [word as u32, (word >> 32) as u32].into_iter().take(left.min(2)) {
            let strong = (half & 0xffff) < gc_threshold;
            let pick = (half >> 16) & 1;
            out.push(match (strong, pick) {
                (true, 0) => b'G',
                (true, _) => b'C',
                (false, 0) => b'A',
                (false, _) => b'T',
            });
        }
        left -= left.min(2);
    }
}

pub fn complement(base: u8) -> u8 {
    match base {
        b'A' => b'T',
        b'C' => b'G',
        b'G' => b'C',
        b'T' => b'A',
        other => other,
    }
}

pub fn reverse_complement(seq: &[u8]) -> Vec<u8> {
    seq.iter().rev().map(|&b| complement(b)).collect()
}

/// Appends to `out` a copy of `src` with about `rate` differences per base. The gaps between
/// differences are drawn geometrically, so the cost follows the number of differences.
pub fn diverged_into(rng: &mut SmallRng, src: &[u8], rate: f64, out: &mut Vec<u8>) {
    out.reserve(src.len() + 8);
    if rate <= 0.0 {
        out.extend_from_slice(src);
        return;
    }
    let log_keep = (1.0 - rate.min(0.9)).ln();
    let mut i: usize = 0;
    loop {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        let gap = (u.ln() / log_keep) as usize;
        let next = i.saturating_add(gap).min(src.len());
        out.extend_from_slice(&src[i..next]);
        i = next;
        if i >= src.len() {
            return;
        }
        let base = src[i];
        if rng.random_ratio(1, INDEL_EVERY) {
            let len = indel_length(rng);
            if rng.random_bool(0.5) {
                // Insertion before this base (bases drawn at 41 % GC).
                random_bases(rng, len, 0.41, out);
                out.push(base);
                i += 1;
            } else {
                i = (i + len).min(src.len()); // deletion
            }
        } else {
            out.push(substitute(rng, base));
            i += 1;
        }
    }
}

pub fn diverged(rng: &mut SmallRng, src: &[u8], rate: f64) -> Vec<u8> {
    let mut out = Vec::new();
    diverged_into(rng, src, rate, &mut out);
    out
}

/// Indel lengths: half are one base, the rest fall off geometrically up to 8.
fn indel_length(rng: &mut SmallRng) -> usize {
    let mut len = 1;
    while len < 8 && rng.random_bool(0.5) {
        len += 1;
    }
    len
}

/// A different base: the transition partner two times in three, else a transversion.
fn substitute(rng: &mut SmallRng, base: u8) -> u8 {
    let transition = match base {
        b'A' => b'G',
        b'G' => b'A',
        b'C' => b'T',
        b'T' => b'C',
        other => return other, // N stays N
    };
    match rng.random_range(0..6) {
        0..=3 => transition,
        4 => complement(base),
        _ => complement(transition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_bases_follow_gc() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut seq = Vec::new();
        random_bases(&mut rng, 100_001, 0.3, &mut seq);
        assert_eq!(seq.len(), 100_001);
        let gc = seq.iter().filter(|&&b| b == b'G' || b == b'C').count() as f64 / seq.len() as f64;
        assert!((gc - 0.3).abs() < 0.01, "gc {gc}");
    }

    #[test]
    fn divergence_is_near_the_rate() {
        let mut rng = SmallRng::seed_from_u64(2);
        let mut src = Vec::new();
        random_bases(&mut rng, 200_000, 0.41, &mut src);
        let copy = diverged(&mut rng, &src, 0.05);
        // Indels shift the frame, so count substitutions up to the first indel only roughly:
        // the length changes little and the copy is not the source.
        assert!((copy.len() as f64 - src.len() as f64).abs() < 0.01 * src.len() as f64);
        assert_ne!(copy, src);
        assert_eq!(diverged(&mut rng, &src, 0.0), src);
        assert_eq!(reverse_complement(b"AACGTN"), b"NACGTT");
    }
}
