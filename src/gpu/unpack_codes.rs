//! The inexact kernels' reads unpacked on the GPU (`cuda/unpack_codes.cu`) from exact_match's
//! 4-bit ones, which the host copies anyway: a byte a base was 29 MB of page-locked staging a
//! batch slot (bwa's batch of 262,144 100 bp reads), and as many bytes copied every batch.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::nvrtc::compile_cached;

pub const UNPACK_CODES_CU: &str = include_str!("../../cuda/unpack_codes.cu");

/// unpack_codes, compiled (or from the kernel cache) and loaded into `ctx`.
pub fn load(ctx: &Arc<CudaContext>, arch: &'static str) -> Result<CudaFunction> {
    let module = compile_cached(UNPACK_CODES_CU, &[], arch)?.load(ctx)?;
    Ok(module.load_function("unpack_codes")?)
}

/// exact_match's input on the GPU: every read of the batch packed, each read's first word, and
/// whether the words of groups of 32 reads are interleaved (`sequence_stride`).
pub struct PackedReads<'a> {
    pub words: &'a CudaSlice<u32>,
    pub starts: &'a CudaSlice<u64>,
    pub stride: bool,
}

/// The reads the inexact kernels take: each one's index in the batch, first code and length.
pub struct InexactReads<'a> {
    pub read_of: &'a CudaSlice<u32>,
    pub starts: &'a CudaSlice<u64>,
    pub lens: &'a CudaSlice<u16>,
    pub n: usize,
}

/// Queues unpack_codes on `stream`: the inexact reads' codes into `codes`.
pub fn launch(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    packed: &PackedReads,
    reads: &InexactReads,
    codes: &mut CudaSlice<u8>,
) -> Result<()> {
    if reads.n == 0 {
        return Ok(());
    }
    let n = reads.n as u32;
    let cfg = LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let stride = packed.stride as i32;
    let mut launch = stream.launch_builder(f);
    launch.arg(packed.words).arg(packed.starts).arg(&stride);
    launch.arg(reads.read_of).arg(reads.starts).arg(reads.lens).arg(&n).arg(codes);
    // SAFETY: argument order and types match unpack_codes' signature; `codes` holds every
    // inexact read's codes from its first (the batch's code count).
    unsafe { launch.launch(cfg) }.context("launching unpack_codes")?;
    Ok(())
}
