//! Insert size estimation per batch (bwape.c's infer_isize), with its quirks kept: the
//! variance sum starts at -1, and a failure after the quartiles keeps the low and high
//! bounds (which then forbid every pair when there is no previous batch to fall back on).

use super::cmath::{c_int, erfc};

/// bwa's isize_info_t.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InsertSize {
    pub avg: f64,
    pub std: f64,
    pub ap_prior: f64,
    pub low: u64,
    pub high: u64,
    pub high_bayesian: u64,
}

impl InsertSize {
    pub const UNKNOWN: InsertSize =
        InsertSize { avg: -1.0, std: -1.0, ap_prior: 0.0, low: 0, high: 0, high_bayesian: 0 };

    pub fn is_known(&self) -> bool {
        self.avg >= 0.0
    }
}

/// One end as the estimate sees it: position, aligned length, mapping quality.
#[derive(Clone, Copy, Debug)]
pub struct EndSummary {
    pub pos: u64,
    pub len: u64,
    pub mapq: u32,
}

/// Why no estimate came out of a batch (bwa's messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    TooFewPairs,
    BoundsBelowReadLength,
    WeirdPairing,
}

/// The outlier bound in interquartile ranges (about 3 sigma for a normal distribution).
const OUTLIER_BOUND: f64 = 2.0;

/// bwa's search for the largest plausible insert: the first y (in steps of 0.01 sigma) where
/// the normal tail falls below the chance of a chimeric pair at that distance.
fn bayesian_high(avg: f64, std: f64, ap_prior: f64, l_pac: i64) -> (u64, f64) {
    let mut y = 1.0f64;
    while y < 10.0 {
        if 0.5 * erfc(y / std::f64::consts::SQRT_2) < ap_prior / l_pac as f64 * (y * std + avg) {
            break;
        }
        y += 0.01;
    }
    (((y * std + avg + 0.499) as i64) as u64, y)
}

/// infer_isize over the pairs of a batch; `ap_prior` is `-c`, `l_pac` the reference length.
pub fn infer(
    pairs: impl Iterator<Item = [EndSummary; 2]>,
    ap_prior: f64,
    l_pac: i64,
) -> (InsertSize, Result<i32, Failure>) {
    let mut ii = InsertSize::UNKNOWN;
    let mut isizes = Vec::new();
    let mut max_len = 1u64;
    for [a, b] in pairs {
        if a.mapq >= 20 && b.mapq >= 20 {
            let x = if a.pos < b.pos {
                b.pos.wrapping_add(b.len).wrapping_sub(a.pos)
            } else {
                a.pos.wrapping_add(a.len).wrapping_sub(b.pos)
            };
            if x < 100_000 {
                isizes.push(x);
            }
        }
        max_len = max_len.max(a.len).max(b.len);
    }
    let tot = isizes.len();
    if tot < 20 {
        return (ii, Err(Failure::TooFewPairs));
    }
    isizes.sort_unstable();
    let quantile = |q: f64| isizes[(tot as f64 * q + 0.5) as usize] as i32;
    let (p25, p75) = (quantile(0.25), quantile(0.75));
    let tmp = c_int(p25 as f64 - OUTLIER_BOUND * (p75 - p25) as f64 + 0.499);
    ii.low = if tmp as i64 > max_len as i64 { tmp as u64 } else { max_len };
    ii.high = c_int(p75 as f64 + OUTLIER_BOUND * (p75 - p25) as f64 + 0.499) as i64 as u64;
    if ii.low > ii.high {
        return (ii, Err(Failure::BoundsBelowReadLength));
    }
    let inside = || isizes.iter().copied().filter(|&x| x >= ii.low && x <= ii.high);
    let n = inside().count();
    let sum: u64 = inside().sum();
    ii.avg = sum as f64 / n as f64;
    // bwa starts the sum of squares at the -1.0 it used for "unknown".
    let mut var = -1.0f64;
    for x in inside() {
        let d = x as f64 - ii.avg;
        var += d * d;
    }
    ii.std = (var / n as f64).sqrt();
    let (high_bayesian, _) = bayesian_high(ii.avg, ii.std, ap_prior, l_pac);
    ii.high_bayesian = high_bayesian;
    let n_ap = isizes.iter().filter(|&&x| x > ii.high_bayesian).count();
    ii.ap_prior = 0.01 * (n_ap as f64 + 0.01) / tot as f64;
    if ii.ap_prior < ap_prior {
        ii.ap_prior = ap_prior;
    }
    if ii.std.is_nan() || p75 > 100_000 {
        ii.low = 0;
        ii.high = 0;
        ii.high_bayesian = 0;
        ii.avg = -1.0;
        ii.std = -1.0;
        return (ii, Err(Failure::WeirdPairing));
    }
    (ii, Ok(n as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(pos: u64, insert: u64) -> [EndSummary; 2] {
        [EndSummary { pos, len: 100, mapq: 37 }, EndSummary { pos: pos + insert - 100, len: 100, mapq: 37 }]
    }

    #[test]
    fn estimates_a_tight_distribution() {
        let pairs: Vec<_> = (0..100).map(|i| pair(1000 * i, 290 + (i % 21))).collect();
        let (ii, res) = infer(pairs.into_iter(), 1e-5, 1_000_000);
        assert!(res.is_ok());
        assert!((ii.avg - 300.0).abs() < 1.0, "{ii:?}");
        assert!(ii.high_bayesian > 310 && ii.high_bayesian < 400, "{ii:?}");
    }

    #[test]
    fn too_few_pairs_is_unknown() {
        let pairs: Vec<_> = (0..19).map(|i| pair(1000 * i, 300)).collect();
        let (ii, res) = infer(pairs.into_iter(), 1e-5, 1_000_000);
        assert_eq!(res, Err(Failure::TooFewPairs));
        assert!(!ii.is_known());
    }
}
