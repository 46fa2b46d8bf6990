//! When pass 1 (one thread per read) is worth running: `aln` skips it, so that the team passes
//! search every read, once it hands on too many of a batch's reads
//! ([`GpuAligner::adapt_first_pass`](super::GpuAligner::adapt_first_pass)).

/// The share of its reads pass 1 may hand on before `adapt_first_pass` skips it: between the
/// 0.01 % of E. coli and the 9.8 % of the 1 Gbp human-like genome, where the teams alone were
/// slower and faster (docs/gpu.md, session 7).
pub const HAND_ON_SHARE: f64 = 0.05;

/// Whether pass 1, having taken `taken` reads and handed `handed_on` of them on, hands on
/// more than [`HAND_ON_SHARE`].
pub(super) fn hands_on_too_many(taken: u32, handed_on: u32) -> bool {
    handed_on as f64 > HAND_ON_SHARE * taken as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured shares: E. coli's pass 1 keeps its reads, the 1 Gbp human-like genome's
    /// hands on too many.
    #[test]
    fn pass_one_is_skipped_only_where_it_hands_on_many_reads() {
        assert!(!hands_on_too_many(987_780, 110));
        assert!(hands_on_too_many(1_000_000, 98_025));
        assert!(!hands_on_too_many(1000, 50) && hands_on_too_many(1000, 51));
        assert!(!hands_on_too_many(0, 0));
    }
}
