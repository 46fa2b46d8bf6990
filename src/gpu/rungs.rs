//! The speculative ladder's rungs inside the team passes (`BCUDA_TEST_LADDER=passes,2,3`; a
//! test hook): the inexact kernels compiled with `-Drungs=MASK`, a bit a guess. Pass 1 hands
//! every read on; a team judges each read as its search ends (cuda/inexact_match.cu,
//! `rung_next`) and searches it again with the next limit where its answer does not stand, or
//! where bwa's `-m` might have stopped bwa's search first and the guard does not prove it did
//! not: a best hit of one mismatch is proved by its class, one of two mismatches by the entry
//! points a rung of 3 counts and their bound (cuda/m_guard.cuh; src/search/m_guard.rs,
//! `kernel_bounds`) and, where that is over `-m`, the bound with D arrays from every 8th read
//! position too (cuda/rung_guard.cu; `counted_bound`'s second stage); any other answer under a
//! guess goes on to the next rung.

use std::borrow::Cow;

use anyhow::Result;

use super::nvrtc::{compile_cached, Image};
use super::switches::InexactSwitches;

/// The guard's bound, compiled after the inexact kernels with the rungs.
pub const M_GUARD_CUH: &str = include_str!("../../cuda/m_guard.cuh");
/// The guard as a read's search ends, which computes the bound: compiled after it.
pub const RUNG_GUARD_CU: &str = include_str!("../../cuda/rung_guard.cu");

/// The ints a team's `-m` guard counters take after its other ints, for reads up to `max_len`
/// (`GUARD_INTS` in cuda/inexact_match.cu, and one for the even offset they start at).
pub fn guard_counter_ints(max_len: usize) -> usize {
    ((4 + 6 * (max_len + 2) + 1) & !1) + 1
}

/// The inexact kernels compiled with the rungs in the team passes. `hooks`: the measurement
/// hook's define (`-Drung_guard=N`).
pub fn compile_in_passes(
    switches: &InexactSwitches,
    arch: &'static str,
    guesses: &[i32],
    hooks: &[String],
) -> Result<Vec<(u32, Image)>> {
    let rungs = rungs_define(guesses)?;
    let source = in_passes_source();
    switches
        .modules()
        .into_iter()
        .map(|(team, mut defines)| {
            defines.push(rungs.clone());
            defines.extend_from_slice(hooks);
            compile_cached(&source, &defines, arch).map(|image| (team, image))
        })
        .collect()
}

/// The inexact kernels' source with the `-m` guard after it: its bound, then the team's side.
pub fn in_passes_source() -> String {
    format!("{}\n{M_GUARD_CUH}\n{RUNG_GUARD_CU}", super::INEXACT_MATCH_CU)
}

/// The define that compiles the rungs with `guesses` into the inexact kernels.
pub fn rungs_define(guesses: &[i32]) -> Result<String> {
    Ok(format!("-Drungs={}", guess_mask(guesses)?))
}

/// The guesses as the kernels' mask: bit g for guess g (1 to 30).
fn guess_mask(guesses: &[i32]) -> Result<u32> {
    if guesses.is_empty() || guesses.iter().any(|&g| !(1..=30).contains(&g)) {
        anyhow::bail!("the ladder's guesses are 1 to 30, not {guesses:?}");
    }
    Ok(guesses.iter().fold(0, |m, &g| m | 1 << g))
}

/// Each read's limit as the kernels with the rungs take it: the first rung's (the first guess,
/// or the read's own where less) in the low byte, the read's own above.
pub fn encoded_limits(own: &[i32], first: i32) -> Vec<i32> {
    own.iter().map(|&f| f.min(first) | f << 8).collect()
}

/// The reads' limits as the inexact kernels take them: their own, or with the ladder's
/// `guesses` [`encoded_limits`].
pub fn limits<'a>(guesses: Option<&[i32]>, own: &'a [i32]) -> Cow<'a, [i32]> {
    match guesses {
        Some(g) => Cow::Owned(encoded_limits(own, g[0])),
        None => Cow::Borrowed(own),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvrtc::{compile, nvrtc_present};

    #[test]
    fn the_inexact_kernels_compile_with_the_rungs_in_the_team_passes() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        // Every team size: pass 3's larger teams take the one-base step too.
        for (_, mut defines) in InexactSwitches::default().modules() {
            defines.push(rungs_define(&[2, 3]).unwrap());
            let ptx = compile(&in_passes_source(), &defines, Some("sm_90")).unwrap();
            assert!(ptx.contains("inexact_level"));
        }
    }

    #[test]
    fn the_kernels_take_the_guesses_as_bits_and_each_read_its_two_limits() {
        assert_eq!(guess_mask(&[2, 3]).unwrap(), 0b1100);
        assert!(guess_mask(&[0]).is_err() && guess_mask(&[31]).is_err() && guess_mask(&[]).is_err());
        // A read's own limit under the first guess is its first rung's too.
        assert_eq!(encoded_limits(&[5, 1, 0], 2), vec![2 | 5 << 8, 1 | 1 << 8, 0]);
    }
}
