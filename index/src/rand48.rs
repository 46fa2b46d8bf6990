//! POSIX `srand48` / `lrand48` / `drand48`: BWA draws the bases that replace N (seed 11)
//! and `samse`'s random choice among equal hits from this generator, so we reproduce it.

/// The 48-bit linear congruential generator of POSIX `*rand48`.
#[derive(Clone, Debug)]
pub struct Rand48 {
    state: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

impl Rand48 {
    /// `srand48(seed)`: the high 32 bits of the state are the seed's low 32 bits, the low 16 are 0x330E.
    pub fn new(seed: i64) -> Rand48 {
        Rand48 { state: ((seed as u64 & 0xffff_ffff) << 16) | 0x330E }
    }

    fn step(&mut self) -> u64 {
        self.state = (self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & MASK;
        self.state
    }

    /// `lrand48()`: a non-negative 31-bit integer.
    pub fn lrand48(&mut self) -> i64 {
        (self.step() >> 17) as i64
    }

    /// `drand48()`: a double in [0, 1).
    pub fn drand48(&mut self) -> f64 {
        self.step() as f64 / (1u64 << 48) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by glibc 2.36 for `srand48(11)` followed by `lrand48()` / `drand48()`.
    #[test]
    fn matches_glibc_sequences() {
        let mut r = Rand48::new(11);
        let got: Vec<i64> = (0..5).map(|_| r.lrand48()).collect();
        assert_eq!(got, [1609868485, 1074594562, 470884846, 2128573038, 960673312]);
        let mut r = Rand48::new(11);
        let got: Vec<f64> = (0..3).map(|_| r.drand48()).collect();
        assert_eq!(got, [0.74965343142776319, 0.50039708716528253, 0.21927284360038968]);
    }
}
