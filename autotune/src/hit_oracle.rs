//! The hit-level oracle of the inexact kernels: a variant must give, for every read of the
//! batch, the same hits (interval, packed counts and score) in the same order as the
//! unmodified kernels, and leave the same reads to the CPU (`None`). Any difference fails
//! the variant; there is no partial credit, as a `.sai` is either identical or wrong.

use std::fmt::Debug;

/// Where a variant's answers first differ from the reference's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HitMismatch {
    /// The batches hold different numbers of reads.
    Reads { reference: usize, variant: usize },
    /// One side left the read to the CPU, the other answered it.
    LeftToCpu { read: usize, by_variant: bool },
    /// Different numbers of hits for a read.
    Count { read: usize, reference: usize, variant: usize },
    /// Hit `hit` of a read differs (another interval, counts or score, or another order).
    Hit { read: usize, hit: usize, reference: String, variant: String },
}

/// The first difference between two batches' answers (one entry per read: its hits in order,
/// or None for a read the GPU left to the CPU), or None when they are identical.
pub fn first_difference<H: PartialEq + Debug>(
    reference: &[Option<Vec<H>>],
    variant: &[Option<Vec<H>>],
) -> Option<HitMismatch> {
    if reference.len() != variant.len() {
        return Some(HitMismatch::Reads { reference: reference.len(), variant: variant.len() });
    }
    for (read, (r, v)) in reference.iter().zip(variant).enumerate() {
        let (r, v) = match (r, v) {
            (None, None) => continue,
            (Some(_), None) => return Some(HitMismatch::LeftToCpu { read, by_variant: true }),
            (None, Some(_)) => return Some(HitMismatch::LeftToCpu { read, by_variant: false }),
            (Some(r), Some(v)) => (r, v),
        };
        if r.len() != v.len() {
            return Some(HitMismatch::Count { read, reference: r.len(), variant: v.len() });
        }
        if let Some(hit) = r.iter().zip(v).position(|(a, b)| a != b) {
            return Some(HitMismatch::Hit {
                read,
                hit,
                reference: format!("{:?}", r[hit]),
                variant: format!("{:?}", v[hit]),
            });
        }
    }
    None
}

impl std::fmt::Display for HitMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HitMismatch::Reads { reference, variant } => write!(f, "{variant} reads answered, {reference} expected"),
            HitMismatch::LeftToCpu { read, by_variant: true } => {
                write!(f, "read {read}: left to the CPU by the variant only")
            }
            HitMismatch::LeftToCpu { read, by_variant: false } => {
                write!(f, "read {read}: left to the CPU by the reference only")
            }
            HitMismatch::Count { read, reference, variant } => {
                write!(f, "read {read}: {variant} hits, {reference} expected")
            }
            HitMismatch::Hit { read, hit, reference, variant } => {
                write!(f, "read {read}, hit {hit}: {variant}, expected {reference}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A .sai hit as the oracle sees it: packed counts and score, k, l.
    #[derive(Clone, Debug, PartialEq)]
    struct Hit {
        bits: u64,
        k: u64,
        l: u64,
    }

    fn hit(score: u64, k: u64, l: u64) -> Hit {
        Hit { bits: 1 | score << 24, k, l }
    }

    fn reference() -> Vec<Option<Vec<Hit>>> {
        vec![Some(vec![hit(0, 5, 9)]), Some(vec![hit(3, 10, 10), hit(3, 40, 41), hit(14, 7, 7)]), None, Some(vec![])]
    }

    #[test]
    fn identical_answers_pass() {
        assert_eq!(first_difference(&reference(), &reference()), None);
        assert_eq!(first_difference::<Hit>(&[], &[]), None);
    }

    #[test]
    fn a_reordered_hit_fails() {
        let mut v = reference();
        v[1].as_mut().unwrap().swap(0, 1);
        assert!(matches!(first_difference(&reference(), &v), Some(HitMismatch::Hit { read: 1, hit: 0, .. })));
    }

    #[test]
    fn a_dropped_hit_fails() {
        let mut v = reference();
        v[1].as_mut().unwrap().pop();
        assert_eq!(first_difference(&reference(), &v), Some(HitMismatch::Count { read: 1, reference: 3, variant: 2 }));
        let mut v = reference();
        v[0].as_mut().unwrap().clear();
        assert_eq!(first_difference(&reference(), &v), Some(HitMismatch::Count { read: 0, reference: 1, variant: 0 }));
    }

    #[test]
    fn a_changed_score_or_interval_fails() {
        let mut v = reference();
        v[1].as_mut().unwrap()[2] = hit(15, 7, 7);
        assert!(matches!(first_difference(&reference(), &v), Some(HitMismatch::Hit { read: 1, hit: 2, .. })));
        let mut v = reference();
        v[0].as_mut().unwrap()[0].l = 10;
        assert!(matches!(first_difference(&reference(), &v), Some(HitMismatch::Hit { read: 0, hit: 0, .. })));
    }

    #[test]
    fn reads_left_to_the_cpu_must_match_too() {
        let mut v = reference();
        v[0] = None;
        assert_eq!(first_difference(&reference(), &v), Some(HitMismatch::LeftToCpu { read: 0, by_variant: true }));
        let mut v = reference();
        v[2] = Some(vec![]);
        assert_eq!(first_difference(&reference(), &v), Some(HitMismatch::LeftToCpu { read: 2, by_variant: false }));
        assert_eq!(
            first_difference(&reference(), &reference()[..3]),
            Some(HitMismatch::Reads { reference: 4, variant: 3 })
        );
    }
}
