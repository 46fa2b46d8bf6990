//! Large host arrays (the BWT, read through a memory map) to the GPU at start-up, where `aln`
//! waits for them after the GPU's context opens: through page-locked staging. Registering the
//! mapped pages with the driver and copying them where they lie was no faster on the H100 host
//! (17.6 against 18.7 GB/s; `bcuda-dev copy-bench`).

use std::sync::Arc;

use anyhow::Result;
use cudarc::driver::{sys, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};

/// How [`copy_staged`] takes a host array to the GPU: pieces of `piece_bytes` through `buffers`
/// page-locked buffers, write-combined (the host only writes them) or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Staging {
    pub piece_bytes: usize,
    pub buffers: usize,
    pub write_combined: bool,
}

/// The BWT's staging at start-up.
pub const STAGING: Staging = Staging { piece_bytes: 64 << 20, buffers: 2, write_combined: true };

/// Copies a large host array (the BWT, read through a memory map) into a device buffer of
/// its length through page-locked staging buffers ([`STAGING`]): all cores fill one piece while
/// the GPU takes another. A plain (pageable) copy of the 3.1 Gbp BWT, 1.7 GB, ran at about
/// 4 GB/s on the H100 host: 0.41 s of every run's start-up.
pub fn copy_large<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync>(
    stream: &Arc<CudaStream>,
    data: &[T],
    dev: &mut CudaSlice<T>,
) -> Result<()> {
    copy_staged(stream, data, dev, STAGING)
}

/// [`copy_large`] with the staging given (`bcuda-dev copy-bench` compares them).
pub fn copy_staged<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync>(
    stream: &Arc<CudaStream>,
    data: &[T],
    dev: &mut CudaSlice<T>,
    staging: Staging,
) -> Result<()> {
    use rayon::prelude::*;
    let piece = (staging.piece_bytes / std::mem::size_of::<T>().max(1)).clamp(1, data.len().max(1));
    let flags = if staging.write_combined { sys::CU_MEMHOSTALLOC_WRITECOMBINED } else { 0 };
    // SAFETY: each staging buffer is written (below) before its copy is queued.
    let mut buffers = (0..staging.buffers.max(1))
        .map(|_| unsafe { stream.context().alloc_pinned_with_flags::<T>(piece, flags) })
        .collect::<Result<Vec<_>, _>>()?;
    let mut in_flight: Vec<Option<cudarc::driver::CudaEvent>> = (0..buffers.len()).map(|_| None).collect();
    for (i, chunk) in data.chunks(piece).enumerate() {
        let b = i % buffers.len();
        // The buffer's previous copy must be done before it is filled again.
        if let Some(copied) = in_flight[b].take() {
            copied.synchronize()?;
        }
        let host = &mut buffers[b].as_mut_slice()?[..chunk.len()];
        host.par_chunks_mut(1 << 16).zip(chunk.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
        // A plain slice to cudarc (no event of its own): the driver sees page-locked memory
        // and copies asynchronously; the event above guards the buffer instead.
        stream.memcpy_htod(&*host, &mut dev.slice_mut(i * piece..i * piece + chunk.len()))?;
        in_flight[b] = Some(stream.record_event(None)?);
    }
    stream.synchronize()?;
    Ok(())
}
