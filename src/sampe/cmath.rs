//! C floating-point behaviour that sampe's scores depend on: the C library's erfc (Rust's
//! std has none; bwa's pairing and insert-size bounds round its results to integers, so the
//! same libm function is used rather than another implementation), and C's double-to-int
//! conversion as x86-64 performs it (out of range or NaN gives INT_MIN; Rust saturates).

extern "C" {
    #[link_name = "erfc"]
    fn libm_erfc(x: f64) -> f64;
}

/// The complementary error function from the system's libm (the one bwa calls).
pub fn erfc(x: f64) -> f64 {
    // SAFETY: erfc is a pure libm function of one double.
    unsafe { libm_erfc(x) }
}

/// `(int)x` as compiled C code computes it on x86-64 (cvttsd2si).
pub fn c_int(x: f64) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x <= -2_147_483_649.0 {
        i32::MIN
    } else {
        x as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_and_int_conversion() {
        assert_eq!(erfc(0.0), 1.0);
        assert!((erfc(1.0) - 0.157_299_207_050_285_13).abs() < 1e-15);
        assert_eq!(c_int(2.7), 2);
        assert_eq!(c_int(-2.7), -2);
        assert_eq!(c_int(f64::NAN), i32::MIN);
        assert_eq!(c_int(f64::INFINITY), i32::MIN);
    }
}
