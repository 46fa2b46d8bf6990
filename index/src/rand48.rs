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

    /// Moves the generator `steps` draws on without drawing them, in O(log steps): the state
    /// after n steps of x -> a x + c is a^n x + c (a^(n-1) + ... + a + 1) (mod 2^48), the affine
    /// map composed by repeated squaring (no division, so a - 1 being even does not matter).
    pub fn skip(&mut self, steps: u64) {
        // (mul, add): the map of the steps taken so far; (sq_mul, sq_add): the map of 2^k steps.
        let (mut mul, mut add) = (1u64, 0u64);
        let (mut sq_mul, mut sq_add) = (MULTIPLIER, INCREMENT);
        let mut n = steps;
        while n > 0 {
            if n & 1 == 1 {
                mul = mul.wrapping_mul(sq_mul) & MASK;
                add = add.wrapping_mul(sq_mul).wrapping_add(sq_add) & MASK;
            }
            sq_add = sq_add.wrapping_mul(sq_mul.wrapping_add(1)) & MASK;
            sq_mul = sq_mul.wrapping_mul(sq_mul) & MASK;
            n >>= 1;
        }
        self.state = self.state.wrapping_mul(mul).wrapping_add(add) & MASK;
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
        // As glibc's printf("%.17g") wrote them (the same doubles as the shortest forms).
        #[allow(clippy::excessive_precision)]
        let printed = [0.74965343142776319, 0.50039708716528253, 0.21927284360038968];
        assert_eq!(got, printed);
    }

    /// Skipping n draws lands where n draws do, for every n up to 3000, around 2^19 and 2^20,
    /// in pieces, and at a large n by pieces of known sizes.
    #[test]
    fn skip_matches_stepping() {
        for seed in [11i64, 0, -1, 123_456_789] {
            let mut stepped = Rand48::new(seed);
            for n in 0..3000u64 {
                let mut skipped = Rand48::new(seed);
                skipped.skip(n);
                assert_eq!(skipped.state, stepped.state, "seed {seed} n {n}");
                stepped.lrand48();
            }
        }
        let mut stepped = Rand48::new(11);
        let mut at = 0u64;
        for n in [(1u64 << 19) - 1, 1 << 19, (1 << 19) + 1, (1 << 20) + 7, 3 << 21] {
            while at < n {
                stepped.lrand48();
                at += 1;
            }
            let mut skipped = Rand48::new(11);
            skipped.skip(n);
            assert_eq!(skipped.state, stepped.state, "n {n}");
            let mut in_parts = Rand48::new(11);
            in_parts.skip(n / 3);
            in_parts.skip(n - n / 3);
            assert_eq!(in_parts.state, stepped.state, "n {n} in two parts");
        }
        // The period is 2^48: skipping it changes nothing; skipping 2^48 - 1 then one is it.
        let mut r = Rand48::new(11);
        r.skip(1 << 48);
        assert_eq!(r.state, Rand48::new(11).state);
        r.skip((1 << 48) - 1);
        r.lrand48();
        assert_eq!(r.state, Rand48::new(11).state);
    }
}
