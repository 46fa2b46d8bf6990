//! Opening a GPU: its context, and `aln`'s kernels compiled by NVRTC (or read from the kernel
//! cache) and loaded, before the index is on it ([`GpuAligner::on`](super::GpuAligner::on)
//! copies the BWT).

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use cudarc::driver::{sys, CudaContext, CudaFunction};

use super::inexact_kernels::{self, InexactKernels};
use super::no_hit::{self, NoHitKernels};
use super::nvrtc::{self, arch_for, compile_cached, driver_present, nvrtc_present, Image};
use super::switches::{InexactSwitches, Switches};
use super::{EXACT_MATCH_CU, INEXACT_MATCH_CU};

/// The compiled kernels of `aln`: the inexact modules (one per team size), exact_match's, and
/// the no-hit pass's when it is on.
type KernelImages = (Vec<(u32, Image)>, Image, Option<Image>);

/// `aln`'s kernels for `arch` with these switches, from the kernel cache or NVRTC (at once: NVRTC
/// takes seconds for the inexact ones): the inexact modules ([`inexact_kernels::compile`]),
/// exact_match's, and the no-hit pass's when the switches turn it on.
fn compile_kernels(inexact: &InexactSwitches, exact: &Switches, arch: &'static str) -> Result<KernelImages> {
    let (inexact_images, exact_image, no_hit_image) = std::thread::scope(|s| {
        let inexact_images = s.spawn(|| inexact_kernels::compile(INEXACT_MATCH_CU, inexact, arch));
        let no_hit_image = s.spawn(|| no_hit::compile(inexact, arch));
        let exact_image = compile_cached(EXACT_MATCH_CU, &exact.defines(), arch);
        let panicked = |_| anyhow::anyhow!("NVRTC panicked");
        (inexact_images.join().map_err(panicked), exact_image, no_hit_image.join().map_err(panicked))
    });
    Ok((inexact_images??, exact_image?, no_hit_image??))
}

/// Compiles `aln`'s kernels with their default switches for `arch` into the kernel cache, so the
/// first `aln` on a new machine skips NVRTC's seconds (`bcuda index` does it beside its sort).
pub fn warm_kernel_cache(arch: &'static str) {
    let _ = compile_kernels(&InexactSwitches::default(), &Switches::default(), arch);
    let _ = compile_cached(super::interval_table::INTERVAL_TABLE_CU, &[], arch);
    let _ = compile_cached(super::compact_hits::COMPACT_HITS_CU, &[], arch);
    let _ = compile_cached(super::unpack_codes::UNPACK_CODES_CU, &[], arch);
}

/// Where start-up went (seconds), for the aln summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct StartupTimes {
    /// Creating the CUDA context.
    pub context_s: f64,
    /// Compiling the kernels with NVRTC (or reading them from the cache) and loading them.
    pub kernels_s: f64,
    /// Whether every kernel came from the kernel cache.
    pub kernels_cached: bool,
    /// Copying the BWT to the GPU and building its occurrence sectors and interval table there.
    pub copy_s: f64,
    /// The interval table's depth (0: none).
    pub interval_depth: i32,
    /// Whether the search counts from the occurrence sectors (`occ_sectors`, where they fit).
    pub occ_sectors: bool,
    /// Whether the sectors hold the pairs' counts (`occ_pairs`, where they fit).
    pub occ_pairs: bool,
    /// Allocating the inexact passes' scratch (at the first batch, again after a failed one).
    pub scratch_s: f64,
}

/// A GPU opened with its kernels compiled, before the index is on it: `bcuda aln` opens it on
/// its own thread while the index loads, so that NVRTC (the first run on a new machine) and
/// reading a large index overlap.
pub struct OpenGpu {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) device_name: String,
    pub(super) compute_capability: (i32, i32),
    pub(super) arch: &'static str,
    pub(super) sms: usize,
    pub(super) switches: Switches,
    pub(super) inexact: InexactKernels,
    pub(super) no_hit: Option<NoHitKernels>,
    pub(super) exact: CudaFunction,
    /// The batch's layout kernels: compact_hits and unpack_codes.
    pub(super) layout: (CudaFunction, CudaFunction),
    pub(super) inexact_switches: InexactSwitches,
    pub(super) startup: StartupTimes,
}

/// GPU `ordinal`'s model name and compute capability, as CUDA gives them: what `aln` files
/// the GPU's tuned kernels under.
pub fn gpu_model(ordinal: usize) -> Result<(String, (i32, i32))> {
    if !driver_present() {
        bail!("no CUDA driver found (libcuda could not be loaded)");
    }
    let ctx = CudaContext::new(ordinal).with_context(|| format!("opening GPU {ordinal}"))?;
    Ok((ctx.name()?, ctx.compute_capability()?))
}

impl OpenGpu {
    /// Opens GPU `ordinal` and compiles the kernels (default sources, `switches`, the inexact
    /// kernels' default switches, or those of [`crate::test_hooks::inexact_switches`]).
    pub fn open(ordinal: usize, switches: Switches) -> Result<OpenGpu> {
        OpenGpu::open_with(ordinal, switches, crate::test_hooks::inexact_switches()?)
    }

    /// Opens GPU `ordinal` and compiles the kernels (default sources) with these switches.
    pub fn open_with(ordinal: usize, switches: Switches, inexact: InexactSwitches) -> Result<OpenGpu> {
        if !driver_present() {
            bail!("no CUDA driver found (libcuda could not be loaded)");
        }
        if !nvrtc_present() {
            bail!("no NVRTC found (libnvrtc could not be loaded)");
        }
        if let Some(why) = switches.illegal() {
            bail!("kernel switches: {why}");
        }
        if let Some(why) = inexact.illegal() {
            bail!("inexact kernel switches: {why}");
        }
        let t = std::time::Instant::now();
        let ctx = CudaContext::new(ordinal).with_context(|| format!("opening GPU {ordinal}"))?;
        let device_name = ctx.name()?;
        let compute_capability = ctx.compute_capability()?;
        let arch = arch_for(compute_capability);
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        let context_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let kernels_cached = inexact_kernels::cached(INEXACT_MATCH_CU, &inexact, arch)
            && nvrtc::is_cached(EXACT_MATCH_CU, &switches.defines(), arch)
            && no_hit::cached(&inexact, arch)
            && nvrtc::is_cached(super::compact_hits::COMPACT_HITS_CU, &[], arch)
            && nvrtc::is_cached(super::unpack_codes::UNPACK_CODES_CU, &[], arch);
        let (inexact_images, exact_image, no_hit_image) = compile_kernels(&inexact, &switches, arch)?;
        // Loaded here, beside the index load (PTX, on a GPU without a CUBIN target, is compiled by the driver now).
        let inexact_kernels = InexactKernels::load(&ctx, inexact_images)?;
        let no_hit = no_hit_image.map(|image| NoHitKernels::load(&ctx, image)).transpose()?;
        let exact = exact_image.load(&ctx)?.load_function("exact_match")?;
        let layout = (super::compact_hits::load(&ctx, arch)?, super::unpack_codes::load(&ctx, arch)?);
        let startup = StartupTimes {
            context_s,
            kernels_s: t.elapsed().as_secs_f64(),
            kernels_cached,
            copy_s: 0.0,
            interval_depth: 0,
            occ_sectors: false,
            occ_pairs: false,
            scratch_s: 0.0,
        };
        Ok(OpenGpu {
            ctx,
            device_name,
            compute_capability,
            arch,
            sms,
            switches,
            inexact_switches: inexact,
            inexact: inexact_kernels,
            no_hit,
            exact,
            layout,
            startup,
        })
    }
}
