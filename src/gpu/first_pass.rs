//! When pass 1 (one thread per read) is worth running: `aln`'s rule, which pass 1 applies on
//! the GPU ([`GpuAligner::adapt_first_pass`](super::GpuAligner::adapt_first_pass); the rule's
//! state and its check are `rule`, `count_for_rule` and `rule_stops` in cuda/inexact_match.cu).
//! Once pass 1 has handed on more than [`HAND_ON_SHARE`] of the reads it finished, over every
//! batch so far and from 4,096 reads on, it gives up on every read, the ones under way at their
//! next 64th pop, and the team passes search them all.

/// The share of its reads pass 1 may hand on before it gives up: between the 0.01 % of
/// E. coli and the 9.8 % of the 1 Gbp human-like genome, where the teams alone were slower and
/// faster (bench/results/measurements.md, c219d2d).
pub const HAND_ON_SHARE: f64 = 0.05;

/// The rule's state on the GPU, as the kernel reads it: the share in thousandths (0: off),
/// whether pass 1 gives up, the reads it finished, those it handed on.
pub(super) fn rule_state(on: bool) -> [u64; 4] {
    [if on { (HAND_ON_SHARE * 1000.0).round() as u64 } else { 0 }, 0, 0, 0]
}

/// The rule's state once it has given up: every read goes to the team passes.
pub(super) fn given_up_state() -> [u64; 4] {
    let mut state = rule_state(true);
    state[1] = 1;
    state
}

/// What the rule did by the end of a batch, read back from its state: `Some((finished,
/// handed_on))` once pass 1 gives up.
pub(super) fn gave_up(state: &[u64]) -> Option<(u64, u64)> {
    (state[0] != 0 && state[1] != 0).then_some((state[2], state[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel compares thousandths: 5 % is 50 of them, and an off rule never gives up,
    /// whatever its counters say.
    #[test]
    fn the_rule_state_holds_the_share_in_thousandths() {
        assert_eq!(rule_state(true), [50, 0, 0, 0]);
        assert_eq!(rule_state(false), [0, 0, 0, 0]);
        assert_eq!(gave_up(&[50, 1, 9000, 460]), Some((9000, 460)));
        assert_eq!(gave_up(&[50, 0, 9000, 100]), None);
        assert_eq!(gave_up(&[0, 1, 9000, 9000]), None);
    }
}
