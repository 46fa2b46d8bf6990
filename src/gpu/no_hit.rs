//! The no-hit pass (`no_hit_budget`, off by default): before pass 1 of the inexact search, the
//! reads exact_match found no exact match for are proved, where possible, to have no alignment
//! within their edit limit (cuda/no_hit.cu, a port of [`crate::search::no_hit::prove`]). A
//! proved read's answer is 0 hits, and it leaves the queue the passes take reads from; the
//! others, then the reads with an exact match, make pass 1's queue. bwa's search of a read with
//! no hit costs several mapped reads' on ancient DNA (docs/gpu-search.md), and real libraries
//! are often mostly such reads.
//!
//! In the batch's lists: inexact_order writes its queue (the reads without an exact match
//! first) into the pass's own list, [`NO_HIT_LIST`]; `no_hit_proof` takes those reads and
//! appends the ones it leaves to pass 1's list, and `no_hit_join` appends the reads with an
//! exact match after them and sets that list's count.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg};

use super::nvrtc::{compile_cached, is_cached, Image};
use super::slot::BatchOnGpu;
use super::switches::InexactSwitches;
use super::{GPU_MAX_LEN, MAX_PASSES};
use crate::search::no_hit::extra_edits;

pub const NO_HIT_CU: &str = include_str!("../../cuda/no_hit.cu");

/// The pass's input list among the batch's read lists: after pass 1's to the CPU's.
pub(super) const NO_HIT_LIST: usize = MAX_PASSES + 1;

/// Stack entries per thread (24 bytes each, in local memory). On 20,000 ancient-DNA reads of a
/// 200 Mbp human-like genome, 50 % random, `-n 0.01`, at most 100,000 lookups, a proof's stack
/// peaked at 67 entries (median), 139 (90th percentile), 529 (most); with 128 entries 10,013
/// reads were proved against 10,016 with no bound, and the mapped reads that fill it give up
/// sooner (`bcuda-dev no-hit --entries`, bench/results/cpu-2c/no-hit-adna.txt).
pub const ENTRIES: usize = 128;

/// Threads of the pass per SM (each takes reads from the queue until none is left).
const THREADS_PER_SM: usize = 1024;

/// The `-D` options of cuda/no_hit.cu: its block width (the inexact passes'), stack entries
/// and longest read.
pub fn defines(switches: &InexactSwitches) -> Vec<String> {
    vec![
        format!("-DNO_HIT_BLOCK_W={}", switches.block_w),
        format!("-DNO_HIT_ENTRIES={ENTRIES}"),
        format!("-DNO_HIT_MAX_LEN={GPU_MAX_LEN}"),
    ]
}

/// The pass's compiled kernels, from the kernel cache or NVRTC; None when the switches leave
/// the pass off.
pub fn compile(switches: &InexactSwitches, arch: &'static str) -> Result<Option<Image>> {
    if switches.no_hit_budget == 0 {
        return Ok(None);
    }
    compile_cached(NO_HIT_CU, &defines(switches), arch).map(Some)
}

/// Whether [`compile`] would find its kernels in the cache (or need none).
pub fn cached(switches: &InexactSwitches, arch: &'static str) -> bool {
    switches.no_hit_budget == 0 || is_cached(NO_HIT_CU, &defines(switches), arch)
}

/// The proof kernel and the join that follows it, as loaded on a GPU.
#[derive(Clone)]
pub struct NoHitKernels {
    proof: CudaFunction,
    join: CudaFunction,
}

impl NoHitKernels {
    pub fn load(ctx: &Arc<CudaContext>, image: Image) -> Result<NoHitKernels> {
        let module = image.load(ctx)?;
        Ok(NoHitKernels { proof: module.load_function("no_hit_proof")?, join: module.load_function("no_hit_join")? })
    }
}

/// What the pass reads and writes: the batch, bwa's array, the pass's budget, and the lists and
/// counters that link it to inexact_order and pass 1.
pub(super) struct NoHitArgs<'a> {
    pub batch: &'a BatchOnGpu<'a>,
    /// bwa's array, which cuda/no_hit.cu counts from whatever `occ_sectors` (it has no sector
    /// lookups); the batch's primary row and `l2` go with it.
    pub bwa_words: &'a CudaSlice<u32>,
    pub max_lookups: u32,
    /// The pass's list (inexact_order's queue), inexact_order's two counts, the pass's four
    /// counters (its list's count, reads taken, left, proved).
    pub queue: CudaView<'a, u32>,
    pub order_counters: CudaView<'a, u32>,
    pub counters: CudaView<'a, u32>,
    /// Pass 1's list and its two counters.
    pub next_queue: CudaView<'a, u32>,
    pub next_counters: CudaView<'a, u32>,
    pub lookups: CudaView<'a, u64>,
}

/// Queues the pass on `stream`: the proof on the batch's SMs x [`THREADS_PER_SM`] threads in
/// blocks of `block`, then the join over the batch's inexact reads.
pub(super) fn launch(kernels: &NoHitKernels, stream: &Arc<CudaStream>, a: &NoHitArgs, block: u32) -> Result<()> {
    let x = a.batch;
    let threads = (x.sms.max(1) * THREADS_PER_SM) as u32;
    let cfg = LaunchConfig { grid_dim: (threads.div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    // Edits beyond each read's max_diff that bwa's hits may hold (gap extensions under `-e`).
    let extra = extra_edits(x.opt);
    let mut launch = stream.launch_builder(&kernels.proof);
    launch.arg(a.bwa_words).arg(&x.primary).arg(x.l2);
    launch.arg(x.codes).arg(x.starts).arg(x.lens).arg(x.max_diffs).arg(&extra).arg(&a.max_lookups);
    launch.arg(&a.queue).arg(&a.order_counters).arg(&a.counters);
    launch.arg(&a.next_queue).arg(x.n_hits).arg(&a.lookups);
    // SAFETY: argument order and types match no_hit_proof's signature.
    unsafe { launch.launch(cfg) }.context("launching no_hit_proof")?;
    let n32 = x.n as u32;
    let cfg = LaunchConfig { grid_dim: (n32.max(1).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.launch_builder(&kernels.join);
    launch.arg(&a.queue).arg(&n32).arg(&a.order_counters).arg(&a.counters).arg(&a.next_queue).arg(&a.next_counters);
    // SAFETY: argument order and types match no_hit_join's signature.
    unsafe { launch.launch(cfg) }.context("launching no_hit_join")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvrtc::{compile as nvrtc_compile, nvrtc_present};

    /// The pass compiles for sm_90 with the inexact passes' block widths (skipped without NVRTC).
    #[test]
    fn the_pass_compiles_with_each_block_width() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        for block_w in [64, 128, 256] {
            let sw = InexactSwitches { block_w, no_hit_budget: 100_000, ..InexactSwitches::default() };
            let ptx = nvrtc_compile(NO_HIT_CU, &defines(&sw), Some("sm_90")).unwrap();
            assert!(ptx.contains(".entry no_hit_proof") && ptx.contains(".entry no_hit_join"));
        }
    }

    #[test]
    fn the_pass_is_compiled_only_when_on() {
        assert!(compile(&InexactSwitches::default(), "sm_90").unwrap().is_none());
        assert!(cached(&InexactSwitches::default(), "sm_90"));
        let d = defines(&InexactSwitches::default());
        assert_eq!(d, ["-DNO_HIT_BLOCK_W=64", "-DNO_HIT_ENTRIES=128", "-DNO_HIT_MAX_LEN=512"]);
    }
}
