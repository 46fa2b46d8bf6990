//! The speculative ladder's rungs inside a batch (`BCUDA_TEST_LADDER=2,3`; cuda/rungs.cu): the
//! passes run once a rung, each read's limit a guess, and a verdict kernel sends the reads
//! whose answer does not stand on to the next rung, in the same stream, with no host round
//! trip. It measures what the rungs cost inside one run (docs/gpu-search.md, "The `-m` guard";
//! `bench/run ladder` played them as whole runs). These launches have no `-m` guard: where bwa's
//! `-m` stops its search the answer may differ, so they are a test hook, not a mode. The rungs
//! inside the team passes (`BCUDA_TEST_LADDER=passes,2,3`, [`compile_in_passes`]) carry the
//! guard and give bwa's answers.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::nvrtc::{compile_cached, Image};
use super::slot::BatchOnGpu;
use super::switches::InexactSwitches;
use crate::sai::{GapOptions, MODE_GAPE};

pub const RUNGS_CU: &str = include_str!("../../cuda/rungs.cu");
/// The `-m` guard's bound, which the team passes compiled with the rungs include.
pub const M_GUARD_CUH: &str = include_str!("../../cuda/m_guard.cuh");

/// Levels of mismatches a team's `-m` guard counters hold (`GUARD_LEVELS` in
/// cuda/inexact_match.cu): a guess of g needs g + 2 of them.
const GUARD_LEVELS: usize = 8;

/// The ints a team's `-m` guard counters take after its other ints, for reads up to `max_len`
/// (`GUARD_INTS` in cuda/inexact_match.cu).
pub fn guard_counter_ints(max_len: usize) -> usize {
    2 + (GUARD_LEVELS + 2) * (max_len + 1)
}

/// How a GPU runs the ladder's rungs (a test hook): a launch of the passes a rung, or inside
/// the team passes with these guesses.
pub enum Ladder {
    Launches(Rungs),
    InPasses(Vec<i32>),
}

impl Ladder {
    /// The rungs run as launches, if they are.
    pub fn launches(&self) -> Option<&Rungs> {
        match self {
            Ladder::Launches(r) => Some(r),
            Ladder::InPasses(_) => None,
        }
    }
}

/// The ladder's guesses (for the reads that do not occur whole) and its kernels on a GPU.
pub struct Rungs {
    pub guesses: Vec<i32>,
    first: CudaFunction,
    keep: CudaFunction,
    verdict: CudaFunction,
    reset: CudaFunction,
}

/// The inexact kernels compiled with the rungs in the team passes (`-Drungs=MASK`, a bit a
/// guess; cuda/inexact_match.cu, `rung_next`): a team judges each read as its search ends and
/// searches it again with the next limit where its answer does not stand or the `-m` guard
/// does not prove it (cuda/m_guard.cuh), with no launch a rung.
/// `hooks`: the measurement hooks' defines (`-Drung_guard=N`, `-Drung_rounds=1`).
pub fn compile_in_passes(
    switches: &InexactSwitches,
    arch: &'static str,
    guesses: &[i32],
    hooks: &[String],
) -> Result<Vec<(u32, Image)>> {
    let mask = guess_mask(guesses)?;
    if guesses.iter().any(|&g| g as usize + 2 > GUARD_LEVELS) {
        anyhow::bail!("the -m guard counts guesses up to {}, not {guesses:?}", GUARD_LEVELS - 2);
    }
    let source = in_passes_source();
    switches
        .modules()
        .into_iter()
        .map(|(team, mut defines)| {
            defines.push(format!("-Drungs={mask}"));
            defines.extend_from_slice(hooks);
            compile_cached(&source, &defines, arch).map(|image| (team, image))
        })
        .collect()
}

/// The inexact kernels' source with the `-m` guard's bound before it.
fn in_passes_source() -> String {
    format!("{M_GUARD_CUH}\n{}", super::INEXACT_MATCH_CU)
}

/// The guesses as the kernels' mask: bit g for guess g (1 to 30).
fn guess_mask(guesses: &[i32]) -> Result<u32> {
    if guesses.is_empty() || guesses.iter().any(|&g| !(1..=30).contains(&g)) {
        anyhow::bail!("the ladder's guesses are 1 to 30, not {guesses:?}");
    }
    Ok(guesses.iter().fold(0, |m, &g| m | 1 << g))
}

/// Each read's limit as the kernels with the rungs in the passes take it: the first rung's
/// (the first guess, or the read's own where less) in the low byte, the read's own above.
pub fn encoded_limits(own: &[i32], first: i32) -> Vec<i32> {
    own.iter().map(|&f| f.min(first) | f << 8).collect()
}

/// The limit of the rung after rung `r` of a ladder of `guesses` (0: the read's own, bwa's
/// search).
fn next_limit(guesses: &[i32], r: usize) -> i32 {
    guesses.get(r + 1).copied().unwrap_or(0)
}

/// Threads of the rungs' kernels: a block of 256 per 256 reads, at most 64 blocks an SM.
fn launch_config(n: usize, sms: usize) -> LaunchConfig {
    let blocks = (n.div_ceil(256)).clamp(1, 64 * sms.max(1)) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

impl Rungs {
    /// Compiles (or finds in the kernel cache) and loads the rungs' kernels.
    pub fn load(ctx: &Arc<CudaContext>, arch: &'static str, guesses: Vec<i32>) -> Result<Rungs> {
        let module = compile_cached(RUNGS_CU, &[], arch)?.load(ctx)?;
        Ok(Rungs {
            guesses,
            first: module.load_function("rung_first")?,
            keep: module.load_function("rung_keep")?,
            verdict: module.load_function("rung_verdict")?,
            reset: module.load_function("rung_reset")?,
        })
    }

    /// The first rung's limits in `rung_diffs` (holding each read's own): 1 for the reads that
    /// occur whole (by exact_match's intervals, or by the root chains' where `root` holds them,
    /// as inexact_order tells them), else the first guess.
    pub(super) fn first(
        &self,
        stream: &Arc<CudaStream>,
        batch: &BatchOnGpu,
        root: Option<&CudaSlice<u64>>,
        rung_diffs: &CudaSlice<i32>,
    ) -> Result<()> {
        let n32 = batch.n as u32;
        let mut launch = stream.launch_builder(&self.first);
        launch.arg(batch.exact_k).arg(batch.exact_l);
        let no_root = 0u64; // a null pointer: exact_match's intervals
        match root {
            Some(r) => launch.arg(r),
            None => launch.arg(&no_root),
        };
        launch.arg(batch.starts).arg(batch.lens).arg(batch.read_of).arg(&n32).arg(&self.guesses[0]).arg(rung_diffs);
        // SAFETY: argument order and types match rung_first's signature.
        unsafe { launch.launch(launch_config(batch.n, batch.sms)) }.context("launching rung_first")?;
        Ok(())
    }

    /// The rung's reads (pass 1's queue and its count) kept in `rung` for the verdict.
    pub(super) fn keep(&self, stream: &Arc<CudaStream>, queue: Queue, rung: Queue, n: usize, sms: usize) -> Result<()> {
        let mut launch = stream.launch_builder(&self.keep);
        launch.arg(&queue.list).arg(&queue.counters).arg(&rung.list).arg(&rung.counters);
        // SAFETY: argument order and types match rung_keep's signature.
        unsafe { launch.launch(launch_config(n, sms)) }.context("launching rung_keep")?;
        Ok(())
    }

    /// The passes' queue counters zeroed (before a verdict).
    pub(super) fn reset(&self, stream: &Arc<CudaStream>, counters: &cudarc::driver::CudaView<u32>) -> Result<()> {
        let n = counters.len() as u32;
        let mut launch = stream.launch_builder(&self.reset);
        launch.arg(counters).arg(&n);
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: argument order and types match rung_reset's signature.
        unsafe { launch.launch(cfg) }.context("launching rung_reset")?;
        Ok(())
    }

    /// The verdict on rung `r`'s reads: those whose answer does not stand into pass 1's queue
    /// (its counters zeroed), with the next rung's limits.
    pub(super) fn verdict(&self, stream: &Arc<CudaStream>, r: usize, a: &VerdictArgs) -> Result<()> {
        let (next, s_mm, gape) = (next_limit(&self.guesses, r), a.opt.s_mm, (a.opt.mode & MODE_GAPE != 0) as i32);
        let mut launch = stream.launch_builder(&self.verdict);
        launch.arg(&a.rung.list).arg(&a.rung.counters).arg(a.full).arg(a.rung_diffs);
        launch.arg(&next).arg(&s_mm).arg(&gape).arg(a.n_hits).arg(a.hits).arg(&a.hits_per_read);
        launch.arg(a.long_hits).arg(a.long_offsets).arg(&a.queue.list).arg(&a.queue.counters);
        // SAFETY: argument order and types match rung_verdict's signature.
        unsafe { launch.launch(launch_config(a.n, a.sms)) }.context("launching rung_verdict")?;
        Ok(())
    }
}

/// A list of reads and its counters (count, then taken).
pub(super) struct Queue<'a> {
    pub list: cudarc::driver::CudaView<'a, u32>,
    pub counters: cudarc::driver::CudaView<'a, u32>,
}

/// What a verdict reads and writes.
pub(super) struct VerdictArgs<'a> {
    pub opt: &'a GapOptions,
    pub rung: Queue<'a>,
    pub queue: Queue<'a>,
    pub full: &'a CudaSlice<i32>,
    /// Each read's limit in this rung (the passes' `read_max_diff`), which the verdict moves on.
    pub rung_diffs: &'a CudaSlice<i32>,
    pub n_hits: &'a CudaSlice<i32>,
    pub hits: &'a CudaSlice<u64>,
    pub hits_per_read: i32,
    pub long_hits: &'a CudaSlice<u64>,
    pub long_offsets: &'a CudaSlice<u32>,
    pub n: usize,
    pub sms: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvrtc::{compile, nvrtc_present};

    #[test]
    fn the_rungs_kernels_compile_with_nvrtc() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        let ptx = compile(RUNGS_CU, &[], Some("sm_90")).unwrap();
        for kernel in ["rung_first", "rung_keep", "rung_verdict", "rung_reset"] {
            assert!(ptx.contains(kernel), "{kernel} missing");
        }
    }

    #[test]
    fn the_inexact_kernels_compile_with_the_rungs_in_the_team_passes() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        // Every team size: pass 3's larger teams take the one-base step too.
        for (_, mut defines) in InexactSwitches::default().modules() {
            defines.push(format!("-Drungs={}", guess_mask(&[2, 3, 4]).unwrap()));
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

    #[test]
    fn after_the_guesses_comes_bwas_own_limit() {
        assert_eq!([0, 1, 2].map(|r| next_limit(&[2, 3, 4], r)), [3, 4, 0]);
        assert_eq!(next_limit(&[2], 0), 0);
    }
}
