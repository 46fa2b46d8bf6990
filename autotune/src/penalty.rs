//! The k,l penalty oracle: how far a variant kernel's SA interval (k', l') for a read is from
//! the reference kernel's (k, l). A variant must score 0 on every read to be selected.

/// Penalty of one read (rules of ../shared/README.md, "The GI fitness").
pub fn read_penalty(k: u64, l: u64, k2: u64, l2: u64) -> u64 {
    let capped = |a: u64, b: u64| a.abs_diff(b).min(10);
    if k == 0 {
        // N in the read: the variant must say so too.
        let mut p = if k2 == 0 { 0 } else { 100 };
        if k2 != 0 && k2 <= l2 {
            p += 100;
        }
        return p;
    }
    if k > l {
        // No match: a variant claiming one is wrong.
        return if k2 <= l2 && k2 != 0 { 100 } else { 0 };
    }
    if k2 > l2 || k2 == 0 {
        return 100;
    }
    let (n, n2) = (l - k + 1, l2 - k2 + 1);
    if k == l {
        // Unique.
        if k2 < l2 {
            return (n2 - 1).min(100);
        }
        return capped(k, k2) + capped(l, l2);
    }
    // Repeat.
    if n != n2 {
        return n.abs_diff(n2).min(50);
    }
    capped(k, k2) + capped(l, l2)
}

/// Sum over a batch; the slices hold the reference's and the variant's intervals.
pub fn batch_penalty(reference: &[(u64, u64)], variant: &[(u64, u64)]) -> u64 {
    if reference.len() != variant.len() {
        return u64::MAX;
    }
    reference.iter().zip(variant).map(|(&(k, l), &(k2, l2))| read_penalty(k, l, k2, l2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_answers_cost_nothing() {
        for (k, l) in [(0, 0), (9, 3), (5, 5), (5, 9)] {
            assert_eq!(read_penalty(k, l, k, l), 0);
        }
    }

    #[test]
    fn n_reads() {
        assert_eq!(read_penalty(0, 0, 7, 3), 100); // claims no match instead of N
        assert_eq!(read_penalty(0, 0, 7, 9), 200); // claims a match
    }

    #[test]
    fn unmatched_reads() {
        assert_eq!(read_penalty(9, 3, 4, 6), 100);
        assert_eq!(read_penalty(9, 3, 8, 2), 0); // another empty interval is still no match
        assert_eq!(read_penalty(9, 3, 0, 0), 0);
    }

    #[test]
    fn unique_reads() {
        assert_eq!(read_penalty(5, 5, 6, 5), 100);
        assert_eq!(read_penalty(5, 5, 0, 5), 100);
        assert_eq!(read_penalty(5, 5, 5, 8), 3); // three extra matches
        assert_eq!(read_penalty(5, 5, 5, 500), 100);
        assert_eq!(read_penalty(5, 5, 7, 7), 4); // wrong row: |dk| + |dl|
        assert_eq!(read_penalty(5, 5, 900, 900), 20); // each capped at 10
    }

    #[test]
    fn repeat_reads() {
        assert_eq!(read_penalty(5, 9, 9, 5), 100);
        assert_eq!(read_penalty(5, 9, 5, 7), 2); // two matches fewer
        assert_eq!(read_penalty(5, 9, 5, 900), 50);
        assert_eq!(read_penalty(5, 9, 6, 10), 2); // same count, shifted
    }

    #[test]
    fn batch_sums_and_rejects_length_mismatch() {
        assert_eq!(batch_penalty(&[(5, 5), (5, 9)], &[(7, 7), (5, 9)]), 4);
        assert_eq!(batch_penalty(&[(5, 5)], &[]), u64::MAX);
    }
}
