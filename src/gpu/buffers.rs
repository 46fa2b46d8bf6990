//! Kernel inputs and outputs of a batch in flight: device buffers with page-locked host
//! staging, grown on demand and reused batch after batch.

use std::borrow::Cow;
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};

/// The host's page-locking of a buffer's copies: each allocation, with the free of the copy it
/// replaces. Both wait for the GPU's queued work, so a copy that grows mid-run stalls the
/// feeder, for aln's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PinTimes {
    pub count: usize,
    pub bytes: usize,
    pub secs: f64,
}

impl std::ops::AddAssign for PinTimes {
    fn add_assign(&mut self, other: PinTimes) {
        self.count += other.count;
        self.bytes += other.bytes;
        self.secs += other.secs;
    }
}

impl std::iter::Sum for PinTimes {
    fn sum<I: Iterator<Item = PinTimes>>(all: I) -> PinTimes {
        let mut total = PinTimes::default();
        all.for_each(|p| total += p);
        total
    }
}

/// Replaces `host` by a page-locked copy of `len` elements, counted in `times`.
fn pin<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    host: &mut Option<PinnedHostSlice<T>>,
    len: usize,
    flags: u32,
    times: &mut PinTimes,
) -> Result<()> {
    let started = std::time::Instant::now();
    *host = None;
    // SAFETY: every caller writes the elements it reads (a host fill or a copy from the device).
    *host = Some(unsafe { stream.context().alloc_pinned_with_flags::<T>(len, flags) }?);
    *times += PinTimes { count: 1, bytes: len * std::mem::size_of::<T>(), secs: started.elapsed().as_secs_f64() };
    Ok(())
}

/// A kernel input: page-locked host staging and its device copy, grown on demand. Pinned
/// memory lets the copy run asynchronously on the batch's stream, under another batch's kernels.
pub struct Upload<T: DeviceRepr> {
    host: Option<PinnedHostSlice<T>>,
    dev: Option<CudaSlice<T>>,
    /// The host's time in [`Upload::put`], for aln's summary.
    pub busy_s: f64,
    pub pinned: PinTimes,
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy + Default> Upload<T> {
    pub fn new() -> Self {
        Upload { host: None, dev: None, busy_s: 0.0, pinned: PinTimes::default() }
    }

    /// Queues the copy of `data` to the device on `stream`. Waits only if this buffer's
    /// previous copy (two batches ago) has not finished.
    pub fn put(&mut self, stream: &Arc<CudaStream>, data: &[T]) -> Result<&CudaSlice<T>> {
        let started = std::time::Instant::now();
        let need = data.len().max(1);
        if self.host.as_ref().is_none_or(|h| h.len() < need) {
            let capacity = need + need / 8;
            self.dev = None;
            // Write-combined suits a buffer the host only writes; it is zeroed before use.
            pin(stream, &mut self.host, capacity, sys::CU_MEMHOSTALLOC_WRITECOMBINED, &mut self.pinned)?;
            self.host.as_mut().expect("pinned above").as_mut_slice()?.fill(T::default());
            self.dev = Some(stream.alloc_zeros::<T>(capacity)?);
        }
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.dev.as_mut()) else { unreachable!("allocated above") };
        host.as_mut_slice()?[..data.len()].copy_from_slice(data);
        stream.memcpy_htod(host, dev)?;
        self.busy_s += started.elapsed().as_secs_f64();
        Ok(self.dev.as_ref().expect("allocated above"))
    }
}

impl<T: DeviceRepr> Upload<T> {
    /// The device copy of the last [`Upload::put`].
    pub fn uploaded(&self) -> Result<&CudaSlice<T>> {
        self.dev.as_ref().ok_or_else(|| anyhow!("read before upload"))
    }
}

/// Device memory that one kernel writes and later kernels of the batch read (no host copy),
/// grown on demand.
pub struct DeviceBuffer<T: DeviceRepr> {
    dev: Option<CudaSlice<T>>,
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    pub fn new() -> Self {
        DeviceBuffer { dev: None }
    }

    /// The buffer, at least `len` long (contents undefined until a kernel writes it), and
    /// whether it was allocated anew.
    pub fn reserve(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<(&mut CudaSlice<T>, bool)> {
        let need = len.max(1);
        let grow = self.dev.as_ref().is_none_or(|d| d.len() < need);
        if grow {
            self.dev = None;
            // SAFETY: the kernels write every element before they read it.
            self.dev = Some(unsafe { stream.alloc::<T>(need + need / 8) }?);
        }
        Ok((self.dev.as_mut().expect("allocated above"), grow))
    }
}

/// A kernel output: its device buffer and page-locked host copy, grown on demand. The host
/// copy may hold only the first part of the device buffer ([`Download::reserve_host`]).
pub struct Download<T: DeviceRepr> {
    dev: DeviceBuffer<T>,
    host: Option<PinnedHostSlice<T>>,
    /// Elements the last [`Download::fetch`] queued.
    fetched: usize,
    pub pinned: PinTimes,
}

impl<T: DeviceRepr + ValidAsZeroBits> Download<T> {
    pub fn new() -> Self {
        Download { dev: DeviceBuffer::new(), host: None, fetched: 0, pinned: PinTimes::default() }
    }

    /// The device buffer, at least `len` long (contents undefined until a kernel writes it),
    /// with a host copy as long.
    pub fn reserve(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<&mut CudaSlice<T>> {
        self.reserve_host(stream, len, len)
    }

    /// The device buffer, at least `len` long, with a host copy of at least its first
    /// `host_len` elements: page-locking costs the host time, so an output that is mostly
    /// shorter than its room keeps a shorter copy.
    pub fn reserve_host(&mut self, stream: &Arc<CudaStream>, len: usize, host_len: usize) -> Result<&mut CudaSlice<T>> {
        let (dev, _) = self.dev.reserve(stream, len)?;
        let host_len = host_len.clamp(1, dev.len());
        if self.host.as_ref().is_none_or(|h| h.len() < host_len) {
            let capacity = (host_len + host_len / 8).min(dev.len());
            pin(stream, &mut self.host, capacity, 0, &mut self.pinned)?;
        }
        Ok(dev)
    }

    /// Queues the copy of the first `len` elements back to the host, or of as many as its
    /// host copy holds ([`Download::read_all`] reads the rest).
    pub fn fetch(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<()> {
        let (Some(dev), Some(host)) = (self.dev.dev.as_ref(), self.host.as_mut()) else {
            bail!("download before reserve")
        };
        self.fetched = len.min(host.len());
        if self.fetched == 0 {
            return Ok(());
        }
        stream.memcpy_dtoh(&dev.slice(..self.fetched), host)?;
        Ok(())
    }

    /// The first `len` elements, once the copy has arrived; an error past what the last
    /// [`Download::fetch`] copied, whose host copy may hold less than was asked.
    pub fn read(&self, len: usize) -> Result<&[T]> {
        let host = self.host.as_ref().ok_or_else(|| anyhow!("read before fetch"))?;
        if len > self.fetched {
            bail!("{len} elements read where {} were copied back", self.fetched);
        }
        Ok(&host.as_slice()?[..len])
    }

    /// The first `len` elements once the copy has arrived, those past the fetched ones copied
    /// from the device now (on `stream`, which has finished with them).
    pub fn read_all(&self, stream: &Arc<CudaStream>, len: usize) -> Result<Cow<'_, [T]>>
    where
        T: Clone,
    {
        let fetched = self.read(self.fetched.min(len))?;
        if len <= self.fetched {
            return Ok(Cow::Borrowed(fetched));
        }
        let dev = self.dev.dev.as_ref().ok_or_else(|| anyhow!("read before reserve"))?;
        if len > dev.len() {
            bail!("{len} elements asked of a device buffer of {}", dev.len());
        }
        let mut all = fetched.to_vec();
        all.extend(stream.clone_dtoh(&dev.slice(self.fetched..len))?);
        stream.synchronize()?;
        Ok(Cow::Owned(all))
    }
}

/// Fills `dst` with 0xFF bytes (queued on `stream`): answers a kernel leaves unwritten then
/// differ from any it writes, instead of being the previous batch's (see
/// [`GpuAligner::poison_outputs`](super::GpuAligner::poison_outputs)).
pub fn poison<T: DeviceRepr, Dst: DevicePtrMut<T>>(stream: &Arc<CudaStream>, dst: &mut Dst) -> Result<()> {
    let bytes = dst.num_bytes();
    let (ptr, _record) = dst.device_ptr_mut(stream);
    // SAFETY: `ptr` is `bytes` bytes of device memory of `stream`'s context; any byte pattern
    // is a valid integer, the only element types of the answer buffers.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }?;
    Ok(())
}
