//! Parsers of numeric option values for clap: an invalid value is an error naming the option
//! (clap adds it) and the valid range. Options that take them also set
//! `allow_negative_numbers` (real numbers `allow_hyphen_values`: clap does not take `-1e-5`
//! for a number), so that `-o -1` reaches the parser instead of clap's tip to write `-- -1`.

/// An integer from `MIN` to `MAX`.
fn integer<T: TryFrom<i64>>(s: &str, min: i64, max: i64) -> Result<T, String> {
    let range = if max == i32::MAX as i64 || max == i64::MAX {
        format!("an integer of at least {min}")
    } else {
        format!("an integer from {min} to {max}")
    };
    s.trim()
        .parse::<i64>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| format!("must be {range}"))
}

/// 0 or more (bwa's int options: counts, lengths, thresholds).
pub fn at_least_0(s: &str) -> Result<i32, String> {
    integer(s, 0, i32::MAX as i64)
}

/// 1 or more (seed length, threads).
pub fn at_least_1(s: &str) -> Result<i32, String> {
    integer(s, 1, i32::MAX as i64)
}

/// A count of 0 or more.
pub fn count(s: &str) -> Result<usize, String> {
    integer(s, 0, i32::MAX as i64)
}

/// A count of 1 or more (threads, batch sizes, generations).
pub fn positive_count(s: &str) -> Result<usize, String> {
    integer(s, 1, i32::MAX as i64)
}

/// A number of seconds of 1 or more.
pub fn positive_seconds(s: &str) -> Result<u64, String> {
    integer(s, 1, i64::MAX)
}

/// Most differences of one kind (mismatches, gap opens, gap extensions) in an alignment:
/// bwa's search entries and `.sai` records keep each count in 8 bits.
pub const MAX_DIFFS: i64 = 255;

/// A count of differences of one kind (-n as an integer, -o).
pub fn diffs(s: &str) -> Result<i32, String> {
    integer(s, 0, MAX_DIFFS)
}

/// aln's -e: gap extensions, up to [`MAX_DIFFS`]; 0 or less (bwa's default -1) disables long
/// gaps (k-difference mode).
pub fn max_gape(s: &str) -> Result<i32, String> {
    integer(s, i32::MIN as i64, MAX_DIFFS)
        .map_err(|_| format!("must be an integer up to {MAX_DIFFS} (0 or less: k-difference mode, no long gaps)"))
}

/// A seed of 0 or more.
pub fn seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| format!("must be an integer from 0 to {}", u64::MAX))
}

/// Largest mismatch or gap penalty: bwa keeps a search entry's score in 11 bits.
pub const MAX_PENALTY: i64 = 2047;

/// A mismatch or gap penalty of aln (-M -O -E).
pub fn penalty(s: &str) -> Result<i32, String> {
    integer(s, 0, MAX_PENALTY)
}

/// A real number from `min` to `max` (finite: not nan or inf).
fn real(s: &str, min: f64, max: f64, what: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && (min..=max).contains(v))
        .ok_or_else(|| format!("must be {what} from {min} to {max}"))
}

/// A probability (0 to 1).
pub fn probability(s: &str) -> Result<f64, String> {
    real(s, 0.0, 1.0, "a probability")
}

/// Memory in GiB for the suffix sort's chunks: a tiny budget only multiplies the passes over
/// the text (0 made indexing 12 times slower), a huge one does not fit.
pub fn sort_gib(s: &str) -> Result<f64, String> {
    real(s, 0.125, 4096.0, "a number of GiB")
}

/// aln's -n: an integer (max differences, 0 or more) or a fraction (the probability of
/// missing an alignment, above 0), told apart by a '.' as bwa does.
pub fn max_diff(s: &str) -> Result<String, String> {
    let valid = if s.contains('.') {
        s.trim().parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0)
    } else {
        diffs(s).is_ok()
    };
    if valid {
        Ok(s.to_string())
    } else {
        Err(format!("must be an integer from 0 to {MAX_DIFFS} (max differences) or a number above 0 with a '.' (missing probability)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(at_least_0("0"), Ok(0));
        assert!(at_least_0("-1").unwrap_err().contains("at least 0"));
        assert!(at_least_1("0").is_err() && at_least_1("99999999999").is_err());
        assert_eq!(penalty("2047"), Ok(2047));
        assert!(penalty("2048").unwrap_err().contains("from 0 to 2047"));
        assert!(count("-3").is_err() && positive_count("0").is_err());
        assert!(sort_gib("0").is_err() && sort_gib("nan").is_err() && sort_gib("inf").is_err());
        assert_eq!(sort_gib("2"), Ok(2.0));
        assert!(probability("-1e-5").is_err() && probability("1e-5").is_ok());
        assert!(max_diff("0.04").is_ok() && max_diff("4").is_ok() && max_diff("0").is_ok());
        assert!(
            max_gape("-1").is_ok() && max_gape("-100").is_ok() && max_gape("255").is_ok() && max_gape("256").is_err()
        );
        assert!(diffs("255").is_ok() && diffs("256").is_err() && max_diff("256").is_err());
        assert!(
            max_diff("-1").is_err()
                && max_diff("-0.5").is_err()
                && max_diff("0.0").is_err()
                && max_diff("nan.").is_err()
        );
    }
}
