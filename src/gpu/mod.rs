//! GPU driver: the kernels of `cuda/` compiled at run time with NVRTC and run through cudarc.
//!
//! `exact_match` gives each read's exact SA interval; `inexact_match` runs BWA's full aln
//! search per read (the CPU oracle's algorithm, same hits) with a small stack per thread, and
//! `inexact_retry` searches the reads whose stack filled up again with fewer threads and larger
//! stacks. Reads that do not fit even so (longer than [`GPU_MAX_LEN`], a stack or hit list that
//! overflows) are aligned on the CPU, so the .sai is identical whatever the GPU does.

pub mod batch;
pub mod bench;
pub mod switches;

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use bcuda_index::Bwt;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig, PinnedHostSlice, PushKernelArg, ValidAsZeroBits};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

pub use batch::{complete_on_cpu, pack_reads, HostBatch};
use batch::GpuAnswers;
use crate::reads::ReadSeq;
use crate::sai::{AlnHit, GapOptions};
pub use switches::Switches;

/// Longest read the GPU aligns; longer ones go to the CPU.
pub const GPU_MAX_LEN: usize = 512;
/// Stack entries per thread of inexact_match's first pass; most reads need fewer (on E. coli
/// all do), and the rest go to inexact_retry.
const ENTRIES_PER_THREAD: usize = 2048;
/// inexact_retry's threads per SM, and its most stack entries per thread: as many as fit in
/// half the GPU memory that is free once the first pass has its scratch.
const RETRY_THREADS_PER_SM: usize = 256;
const RETRY_MAX_ENTRIES: usize = 65536;
/// Bytes of one stack entry (`Entry` in cuda/inexact_match.cu).
const ENTRY_BYTES: usize = 40;
/// GPU memory left for the batches' buffers when the retry stacks are sized.
const RETRY_MEMORY_MARGIN: usize = 2 << 30;
/// Hits kept per read on the GPU before a read is handed to the CPU.
const HITS_PER_READ: usize = 16;
const INEXACT_BLOCK_W: u32 = 64;

pub const BWT_CUH: &str = include_str!("../../cuda/bwt.cuh");
pub const EXACT_MATCH_CU: &str = include_str!("../../cuda/exact_match.cu");
pub const INEXACT_MATCH_CU: &str = include_str!("../../cuda/inexact_match.cu");

/// Whether the CUDA driver library can be loaded (cudarc panics when it cannot).
pub fn driver_present() -> bool {
    cudarc::get_lib_name_candidates("cuda").iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// Whether NVRTC can be loaded.
pub fn nvrtc_present() -> bool {
    cudarc::get_lib_name_candidates("nvrtc").iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// Compiles a kernel file (with the shared header) to PTX.
pub fn compile(source: &str, defines: &[String], arch: Option<&'static str>) -> Result<String> {
    let full = format!("{BWT_CUH}\n{source}");
    let opts = CompileOptions { options: defines.to_vec(), arch, ..Default::default() };
    let ptx = compile_ptx_with_opts(full, opts).map_err(|e| anyhow!("NVRTC: {e:?}"))?;
    Ok(ptx.to_src())
}

/// `compile`, with the PTX kept under the user's cache directory keyed by a hash of the
/// source, defines and architecture, so later runs skip NVRTC.
pub fn compile_cached(source: &str, defines: &[String], arch: &'static str) -> Result<String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (BWT_CUH, source, defines, arch, env!("CARGO_PKG_VERSION")).hash(&mut h);
    let dir = cache_dir().join("ptx");
    let path = dir.join(format!("{:016x}.ptx", h.finish()));
    if let Ok(ptx) = std::fs::read_to_string(&path) {
        return Ok(ptx);
    }
    let ptx = compile(source, defines, Some(arch))?;
    // A cache that cannot be written only costs a compile next time.
    if std::fs::create_dir_all(&dir).is_ok() {
        let tmp = crate::output::temp_path_for(&path);
        if std::fs::write(&tmp, &ptx).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
    Ok(ptx)
}

/// `$XDG_CACHE_HOME/bcuda` or `~/.cache/bcuda`.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("bcuda")
}

/// Kernel times and counts (GPU events for the kernels, milliseconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchTimes {
    pub exact_ms: f32,
    /// inexact_match and inexact_retry together, and inexact_retry alone (kernel times: a
    /// batch's retry can run beside the next batch's first pass, so they may add up to more
    /// than the time they took together).
    pub inexact_ms: f32,
    pub retry_ms: f32,
    pub exact_reads: usize,
    /// Reads whose first-pass stack filled up (searched again by inexact_retry).
    pub retried_reads: usize,
    pub batches: usize,
}

/// Per-thread working memory of inexact_match (or inexact_retry), kept across batches and
/// grown on demand. Left uninitialised: the kernel writes every cell before reading it. One
/// set serves both streams: a batch's inexact launches wait for the previous batch's to finish.
struct Scratchpad {
    /// (threads, max_len, buckets) it was sized for.
    size: (usize, usize, usize),
    /// Stack entries per thread (an i32, as the kernels take it).
    entries_per_thread: i32,
    width: CudaSlice<u8>,
    seed_width: CudaSlice<u8>,
    seq: CudaSlice<u8>,
    entries: CudaSlice<u8>,
    heads: CudaSlice<i32>,
}

impl Scratchpad {
    fn fits(&self, threads: usize, max_len: usize, buckets: usize) -> bool {
        let (t, m, b) = self.size;
        threads <= t && max_len <= m && buckets <= b
    }

    fn new(stream: &Arc<CudaStream>, t: usize, m: usize, b: usize, entries_per_thread: usize) -> Result<Scratchpad> {
        // SAFETY: inexact_match initialises every element before reading it.
        unsafe {
            Ok(Scratchpad {
                size: (t, m, b),
                entries_per_thread: entries_per_thread as i32,
                width: stream.alloc::<u8>(t * (m + 1) * 16)?,
                seed_width: stream.alloc::<u8>(t * (m + 1) * 16)?,
                seq: stream.alloc::<u8>(t * m)?,
                entries: stream.alloc::<u8>(t * entries_per_thread * ENTRY_BYTES)?,
                heads: stream.alloc::<i32>(t * b)?,
            })
        }
    }

    /// Bytes per thread besides the stack (Width is 16 bytes), for a read length and bucket count.
    fn other_bytes_per_thread(m: usize, b: usize) -> usize {
        2 * (m + 1) * 16 + m + 4 * b
    }
}

/// A kernel input: page-locked host staging and its device copy, grown on demand. Pinned
/// memory lets the copy run asynchronously on the batch's stream, under another batch's kernels.
struct Upload<T: DeviceRepr> {
    host: Option<PinnedHostSlice<T>>,
    dev: Option<CudaSlice<T>>,
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy + Default> Upload<T> {
    fn new() -> Self {
        Upload { host: None, dev: None }
    }

    /// Queues the copy of `data` to the device on `stream`. Waits only if this buffer's
    /// previous copy (two batches ago) has not finished.
    fn put(&mut self, stream: &Arc<CudaStream>, data: &[T]) -> Result<&CudaSlice<T>> {
        let need = data.len().max(1);
        if self.host.as_ref().is_none_or(|h| h.len() < need) {
            let capacity = need + need / 8;
            (self.host, self.dev) = (None, None);
            // SAFETY: the staging buffer is zeroed before use; write-combined suits host writes.
            let mut host = unsafe { stream.context().alloc_pinned_with_flags::<T>(capacity, sys::CU_MEMHOSTALLOC_WRITECOMBINED) }?;
            host.as_mut_slice()?.fill(T::default());
            self.host = Some(host);
            self.dev = Some(stream.alloc_zeros::<T>(capacity)?);
        }
        let (Some(host), Some(dev)) = (self.host.as_mut(), self.dev.as_mut()) else { unreachable!("allocated above") };
        host.as_mut_slice()?[..data.len()].copy_from_slice(data);
        stream.memcpy_htod(host, dev)?;
        Ok(dev)
    }
}

/// A kernel output: its device buffer and page-locked host copy, grown on demand.
struct Download<T: DeviceRepr> {
    dev: Option<CudaSlice<T>>,
    host: Option<PinnedHostSlice<T>>,
}

impl<T: DeviceRepr + ValidAsZeroBits> Download<T> {
    fn new() -> Self {
        Download { dev: None, host: None }
    }

    /// The device buffer, at least `len` long (contents undefined until a kernel writes it).
    fn reserve(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<&mut CudaSlice<T>> {
        let need = len.max(1);
        if self.dev.as_ref().is_none_or(|d| d.len() < need) {
            let capacity = need + need / 8;
            (self.host, self.dev) = (None, None);
            // SAFETY: both are written (kernel, then copy) before they are read.
            unsafe {
                self.host = Some(stream.context().alloc_pinned_with_flags::<T>(capacity, 0)?);
                self.dev = Some(stream.alloc::<T>(capacity)?);
            }
        }
        Ok(self.dev.as_mut().expect("allocated above"))
    }

    /// Queues the copy of the first `len` elements back to the host.
    fn fetch(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<()> {
        let (Some(dev), Some(host)) = (self.dev.as_ref(), self.host.as_mut()) else { bail!("download before reserve") };
        if len == 0 {
            return Ok(());
        }
        stream.memcpy_dtoh(&dev.slice(..len), host)?;
        Ok(())
    }

    /// The first `len` elements, once the copy has arrived.
    fn read(&self, len: usize) -> Result<&[T]> {
        let host = self.host.as_ref().ok_or_else(|| anyhow!("read before fetch"))?;
        Ok(&host.as_slice()?[..len])
    }
}

/// The buffers of one batch in flight, on its own stream.
struct Slot {
    stream: Arc<CudaStream>,
    exact_words: Upload<u32>,
    exact_starts: Upload<u64>,
    lens: Upload<u16>,
    opt: Upload<u32>,
    codes: Upload<u8>,
    starts: Upload<u64>,
    gpu_lens: Upload<u16>,
    max_diffs: Upload<i32>,
    k: Download<u64>,
    l: Download<u64>,
    n_hits: Download<i32>,
    hits: Download<u64>,
    /// Reads listed for inexact_retry, and its two counters (listed, taken).
    retry_reads: Download<u32>,
    retry_counters: Download<u32>,
}

impl Slot {
    fn new(ctx: &Arc<CudaContext>) -> Result<Slot> {
        Ok(Slot {
            stream: ctx.new_stream()?,
            exact_words: Upload::new(),
            exact_starts: Upload::new(),
            lens: Upload::new(),
            opt: Upload::new(),
            codes: Upload::new(),
            starts: Upload::new(),
            gpu_lens: Upload::new(),
            max_diffs: Upload::new(),
            k: Download::new(),
            l: Download::new(),
            n_hits: Download::new(),
            hits: Download::new(),
            retry_reads: Download::new(),
            retry_counters: Download::new(),
        })
    }
}

/// A batch queued on the GPU: its slot, its inputs, and events around its kernels (exact
/// start and end, first pass start and end, retry start and end).
pub struct InFlight {
    slot: usize,
    batch: HostBatch,
    events: [CudaEvent; 6],
}

/// The arguments that inexact_match and inexact_retry share, but for the scratchpad.
struct SearchArgs<'a> {
    index: &'a GpuAligner,
    opt: &'a CudaSlice<u32>,
    codes: &'a CudaSlice<u8>,
    starts: &'a CudaSlice<u64>,
    lens: &'a CudaSlice<u16>,
    max_diffs: &'a CudaSlice<i32>,
    max_len: i32,
    n_buckets: i32,
    hits: &'a CudaSlice<u64>,
    hits_per_read: i32,
    n_hits: &'a CudaSlice<i32>,
    retry_reads: &'a CudaSlice<u32>,
    retry_counters: &'a CudaSlice<u32>,
}

impl<'a> SearchArgs<'a> {
    fn push(&'a self, launch: &mut LaunchArgs<'a>, scratch: &'a Scratchpad) {
        let x = self.index;
        launch.arg(&x.words).arg(&x.primary).arg(&x.seq_len).arg(&x.l2).arg(self.opt);
        launch.arg(self.codes).arg(self.starts).arg(self.lens).arg(self.max_diffs);
        launch.arg(&scratch.width).arg(&scratch.seed_width).arg(&scratch.seq).arg(&self.max_len);
        launch.arg(&scratch.entries).arg(&scratch.heads).arg(&scratch.entries_per_thread).arg(&self.n_buckets);
        launch.arg(self.hits).arg(&self.hits_per_read).arg(self.n_hits);
        launch.arg(self.retry_reads).arg(self.retry_counters);
    }
}

/// The exact_match kernel's arguments besides the index.
struct ExactArgs<'a> {
    reads: &'a CudaSlice<u32>,
    starts: &'a CudaSlice<u64>,
    lens: &'a CudaSlice<u16>,
    n: usize,
    fixed_len: u32,
}

pub struct GpuAligner {
    ctx: Arc<CudaContext>,
    /// Stream of the index copy and of the one-off `exact_match` calls.
    stream: Arc<CudaStream>,
    words: CudaSlice<u32>,
    l2: CudaSlice<u64>,
    primary: u64,
    seq_len: u64,
    switches: Switches,
    /// Source of the exact_match kernel: `cuda/exact_match.cu`, or a variant (autotune).
    exact_source: String,
    exact: HashMap<bool, CudaFunction>,
    inexact: CudaFunction,
    inexact_retry: CudaFunction,
    arch: &'static str,
    pub device_name: String,
    pub compute_capability: (i32, i32),
    /// Sums over all batches.
    pub totals: BatchTimes,
    /// Reads per inexact launch: the batch size, rounded to whole waves of the GPU, halved
    /// when the GPU runs out of memory.
    pub launch_reads: usize,
    scratch: Option<Scratchpad>,
    /// Stack entries per thread of the first pass, and the most for inexact_retry's threads
    /// (ENTRIES_PER_THREAD and RETRY_MAX_ENTRIES; `BCUDA_TEST_STACKS=first,retry` sets them
    /// small so the device checks show that both passes and the CPU give the same hits).
    first_entries: usize,
    retry_max_entries: usize,
    /// inexact_retry's threads and scratch (None: no memory for stacks larger than the first pass's).
    retry_threads: usize,
    retry_scratch: Option<Scratchpad>,
    /// Two batches in flight: one copying while the other computes.
    slots: [Option<Slot>; 2],
    next_slot: usize,
    /// Recorded after the last queued first pass, and after the last queued retry: the first
    /// pass's scratchpad, and the retry's, are free once they pass. Two events, so that one
    /// batch's retry (few threads, long searches) runs beside the next batch's first pass.
    scratch_free: Option<CudaEvent>,
    retry_scratch_free: Option<CudaEvent>,
    /// Batches submitted so far; with `BCUDA_TEST_FAIL_BATCH=N` the N-th (from 1) fails, so
    /// the device checks can show that a failed GPU batch loses no read.
    submitted: usize,
    fail_batch: Option<usize>,
}

pub fn arch_for(cc: (i32, i32)) -> &'static str {
    match cc {
        (9, _) => "sm_90",
        (8, 9) => "sm_89",
        (8, 6) => "sm_86",
        (8, 0) => "sm_80",
        (7, 5) => "sm_75",
        (10, _) => "sm_100",
        (12, _) => "sm_120",
        _ => "sm_75",
    }
}

fn timing_event(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

impl GpuAligner {
    /// Opens GPU 0, compiles the kernels and copies the BWT to it.
    pub fn new(bwt: &Bwt, switches: Switches, batch_size: usize) -> Result<GpuAligner> {
        if !driver_present() {
            bail!("no CUDA driver found (libcuda could not be loaded)");
        }
        if !nvrtc_present() {
            bail!("no NVRTC found (libnvrtc could not be loaded)");
        }
        if let Some(why) = switches.illegal() {
            bail!("kernel switches: {why}");
        }
        let ctx = CudaContext::new(0).context("opening GPU 0")?;
        let device_name = ctx.name()?;
        let compute_capability = ctx.compute_capability()?;
        let arch = arch_for(compute_capability);
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        let wave = sms.max(1) * INEXACT_BLOCK_W as usize;
        let launch_reads = batch_size.max(1).div_ceil(wave) * wave;
        let stream = ctx.default_stream();
        let words = stream.clone_htod(bwt.words()).context("copying the BWT to the GPU")?;
        let l2 = stream.clone_htod(&bwt.l2())?;
        let inexact_ptx = compile_cached(INEXACT_MATCH_CU, &[format!("-DINEXACT_BLOCK_W={INEXACT_BLOCK_W}")], arch)?;
        let inexact_module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(inexact_ptx))?;
        let inexact = inexact_module.load_function("inexact_match")?;
        let inexact_retry = inexact_module.load_function("inexact_retry")?;
        let slots = [Some(Slot::new(&ctx)?), Some(Slot::new(&ctx)?)];
        let test_stacks = std::env::var("BCUDA_TEST_STACKS").ok();
        let (first_entries, retry_max_entries) = match test_stacks.as_deref().map(|v| v.split_once(',').map(|(a, b)| (a.parse(), b.parse()))) {
            None => (ENTRIES_PER_THREAD, RETRY_MAX_ENTRIES),
            Some(Some((Ok(first), Ok(retry)))) if first > 0 => (first, retry),
            Some(_) => bail!("BCUDA_TEST_STACKS: expected two numbers of stack entries, first,retry"),
        };
        let mut aligner = GpuAligner {
            ctx,
            stream,
            words,
            l2,
            primary: bwt.primary(),
            seq_len: bwt.seq_len(),
            switches,
            exact_source: EXACT_MATCH_CU.to_string(),
            exact: HashMap::new(),
            inexact,
            inexact_retry,
            arch,
            device_name,
            compute_capability,
            totals: BatchTimes::default(),
            launch_reads,
            scratch: None,
            first_entries,
            retry_max_entries,
            retry_threads: sms.max(1) * RETRY_THREADS_PER_SM,
            retry_scratch: None,
            slots,
            next_slot: 0,
            scratch_free: None,
            retry_scratch_free: None,
            submitted: 0,
            fail_batch: std::env::var("BCUDA_TEST_FAIL_BATCH").ok().and_then(|v| v.parse().ok()),
        };
        aligner.exact_function(aligner.switches.direct_index)?;
        Ok(aligner)
    }

    /// The exact_match kernel with `direct_index` as given (reads of mixed lengths need it off).
    fn exact_function(&mut self, direct_index: bool) -> Result<CudaFunction> {
        if let Some(f) = self.exact.get(&direct_index) {
            return Ok(f.clone());
        }
        let sw = Switches { direct_index, ..self.switches.clone() };
        let ptx = compile_cached(&self.exact_source, &sw.defines(), self.arch)?;
        let f = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))?.load_function("exact_match")?;
        self.exact.insert(direct_index, f.clone());
        Ok(f)
    }

    /// Uses another exact_match source and switches (a tuned or candidate kernel); compiles it
    /// now so that a bad variant fails here.
    pub fn set_exact_kernel(&mut self, source: &str, switches: Switches) -> Result<()> {
        if let Some(why) = switches.illegal() {
            bail!("kernel switches: {why}");
        }
        self.exact_source = source.to_string();
        self.switches = switches;
        self.exact.clear();
        self.exact_function(self.switches.direct_index)?;
        Ok(())
    }

    /// inexact_retry's threads and stack entries per thread, once sized (None: no retry pass).
    pub fn retry_stacks(&self) -> Option<(usize, usize)> {
        self.retry_scratch.as_ref().map(|s| (s.size.0, s.entries_per_thread as usize))
    }

    pub fn switches(&self) -> &Switches {
        &self.switches
    }

    /// Queues exact_match on `stream`.
    fn launch_exact(&self, stream: &Arc<CudaStream>, f: &CudaFunction, a: ExactArgs, k: &mut CudaSlice<u64>, l: &mut CudaSlice<u64>) -> Result<()> {
        let threads = if self.switches.kl_par { 2 * a.n } else { a.n } as u64;
        let bw = self.switches.block_w;
        let blocks = threads.div_ceil(bw as u64).max(1) as u32;
        let grid = if self.switches.many_blocks { (blocks.min(65535), blocks.div_ceil(65535), 1) } else { (blocks, 1, 1) };
        let cfg = LaunchConfig { grid_dim: grid, block_dim: (bw, 1, 1), shared_mem_bytes: 0 };
        let n32 = a.n as u32;
        let mut launch = stream.launch_builder(f);
        launch.arg(&self.words).arg(&self.primary).arg(&self.seq_len).arg(&self.l2);
        let n_read_words = a.reads.len() as u64;
        launch.arg(a.reads).arg(&n_read_words).arg(a.starts).arg(a.lens).arg(&n32).arg(&a.fixed_len).arg(k).arg(l);
        // SAFETY: argument order and types match exact_match's signature.
        unsafe { launch.launch(cfg) }.context("launching exact_match")?;
        Ok(())
    }

    /// Exact SA intervals of all reads (k = l = 0 for reads with N; k > l for no match) and
    /// the kernel's time: one synchronous call, for benchmarks and the autotuner.
    pub fn exact_match(&mut self, reads: &[ReadSeq]) -> Result<(Vec<u64>, Vec<u64>, f32)> {
        let n = reads.len();
        let lens: Vec<u16> = reads.iter().map(|r| r.len as u16).collect();
        let fixed = lens.iter().all(|&l| l == lens[0]);
        let f = self.exact_function(self.switches.direct_index && fixed)?;
        let (packed, starts) = pack_reads(reads, self.switches.sequence_stride);
        let stream = self.stream.clone();
        let d_reads = stream.clone_htod(&packed)?;
        let d_starts = stream.clone_htod(&starts)?;
        let d_lens = stream.clone_htod(&lens)?;
        let mut d_k = stream.alloc_zeros::<u64>(n)?;
        let mut d_l = stream.alloc_zeros::<u64>(n)?;
        let fixed_len = lens.first().copied().unwrap_or(0) as u32;
        let start = timing_event(&stream)?;
        self.launch_exact(&stream, &f, ExactArgs { reads: &d_reads, starts: &d_starts, lens: &d_lens, n, fixed_len }, &mut d_k, &mut d_l)?;
        let end = timing_event(&stream)?;
        let k = stream.clone_dtoh(&d_k)?;
        let l = stream.clone_dtoh(&d_l)?;
        Ok((k, l, start.elapsed_ms(&end)?))
    }

    /// Queues a batch: copies in, exact_match on every read, inexact_match (BWA's aln search)
    /// on the reads the GPU holds, copies out; returns at once. Batches alternate between two
    /// streams, so one batch's copies overlap the other's kernels; [`GpuAligner::collect`]
    /// waits for the answers.
    pub fn submit(&mut self, batch: HostBatch) -> Result<InFlight> {
        self.submitted += 1;
        if self.fail_batch == Some(self.submitted) {
            bail!("batch {} failed on purpose (BCUDA_TEST_FAIL_BATCH)", self.submitted);
        }
        let direct_index = self.switches.direct_index && batch.fixed_len.is_some();
        let exact_f = self.exact_function(direct_index)?;
        let n_gpu = batch.gpu_reads.len();
        let chunk = self.launch_reads.min(n_gpu).max(1);
        let ml = batch.max_len.max(1);
        let n_buckets = batch.n_buckets as usize;
        if !self.scratch.as_ref().is_some_and(|s| s.fits(chunk, ml, n_buckets)) {
            // The old scratchpads may be in use by the other stream's batch.
            self.ctx.synchronize()?;
            let old = self.scratch.take().map_or((0, 0, 0), |s| s.size);
            self.retry_scratch = None;
            let (t, m, b) = (chunk.max(old.0), ml.max(old.1), n_buckets.max(old.2));
            self.scratch = Some(Scratchpad::new(&self.stream, t, m, b, self.first_entries)?);
            self.retry_scratch = self.new_retry_scratch(m, b)?;
        }
        let slot_index = self.next_slot;
        self.next_slot ^= 1;
        // Out of self while it is filled, so the launches can borrow the index.
        let mut slot = self.slots[slot_index].take().expect("slots are put back after use");
        let queued = self.queue(&mut slot, &batch, &exact_f, chunk);
        self.slots[slot_index] = Some(slot);
        Ok(InFlight { slot: slot_index, batch, events: queued? })
    }

    /// inexact_retry's scratchpad: `retry_threads` stacks as large as half the free GPU memory
    /// allows (at most `retry_max_entries`); None when they would be no larger than the first pass's.
    fn new_retry_scratch(&self, m: usize, b: usize) -> Result<Option<Scratchpad>> {
        let (free, _) = self.ctx.mem_get_info()?;
        let per_thread = free.saturating_sub(RETRY_MEMORY_MARGIN) / 2 / self.retry_threads;
        let entries = (per_thread.saturating_sub(Scratchpad::other_bytes_per_thread(m, b)) / ENTRY_BYTES).min(self.retry_max_entries) / 64 * 64;
        if entries <= self.first_entries {
            return Ok(None);
        }
        Ok(Some(Scratchpad::new(&self.stream, self.retry_threads, m, b, entries)?))
    }

    fn queue(&mut self, slot: &mut Slot, b: &HostBatch, exact_f: &CudaFunction, chunk: usize) -> Result<[CudaEvent; 6]> {
        let stream = slot.stream.clone();
        let (n, n_gpu) = (b.n, b.gpu_reads.len());
        let reads = slot.exact_words.put(&stream, &b.exact_words)?;
        let starts = slot.exact_starts.put(&stream, &b.exact_starts)?;
        let lens = slot.lens.put(&stream, &b.lens)?;
        let k = slot.k.reserve(&stream, n)?;
        let l = slot.l.reserve(&stream, n)?;
        let exact_start = timing_event(&stream)?;
        let args = ExactArgs { reads, starts, lens, n, fixed_len: b.fixed_len.unwrap_or(0) };
        self.launch_exact(&stream, exact_f, args, k, l)?;
        let exact_end = timing_event(&stream)?;

        let opt_words: [u32; 16] = bytemuck::cast(b.opt);
        let d_opt = slot.opt.put(&stream, &opt_words)?;
        let codes = slot.codes.put(&stream, &b.codes)?;
        let starts = slot.starts.put(&stream, &b.starts)?;
        let gpu_lens = slot.gpu_lens.put(&stream, &b.gpu_lens)?;
        let max_diffs = slot.max_diffs.put(&stream, &b.max_diffs)?;
        let n_hits = slot.n_hits.reserve(&stream, n_gpu)?;
        let hits = slot.hits.reserve(&stream, n_gpu * HITS_PER_READ * 3)?;
        let retry_reads = slot.retry_reads.reserve(&stream, n_gpu)?;
        let retry_counters = slot.retry_counters.reserve(&stream, 2)?;
        stream.memset_zeros(retry_counters)?;
        // The scratchpads are shared: wait for the previous batch's first pass to finish with
        // the first one (and below, for its retry to finish with the retry's).
        if let Some(free) = &self.scratch_free {
            stream.wait(free)?;
        }
        let args = SearchArgs {
            index: self,
            opt: d_opt,
            codes,
            starts,
            lens: gpu_lens,
            max_diffs,
            max_len: b.max_len.max(1) as i32,
            n_buckets: b.n_buckets,
            hits,
            hits_per_read: HITS_PER_READ as i32,
            n_hits,
            retry_reads,
            retry_counters,
        };
        let inexact_start = timing_event(&stream)?;
        let scratch = self.scratch.as_ref().expect("reserved by submit");
        for first in (0..n_gpu).step_by(chunk) {
            let count = chunk.min(n_gpu - first) as u32;
            let first = first as u32;
            let cfg = LaunchConfig { grid_dim: (count.div_ceil(INEXACT_BLOCK_W), 1, 1), block_dim: (INEXACT_BLOCK_W, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&self.inexact);
            args.push(&mut launch, scratch);
            launch.arg(&first).arg(&count);
            // SAFETY: argument order and types match inexact_match's signature.
            unsafe { launch.launch(cfg) }.context("launching inexact_match")?;
        }
        let first_pass_end = timing_event(&stream)?;
        let first_pass_done = stream.record_event(None)?;
        if let Some(free) = &self.retry_scratch_free {
            stream.wait(free)?;
        }
        let retry_start = timing_event(&stream)?;
        if let Some(retry) = &self.retry_scratch {
            let cfg = LaunchConfig { grid_dim: ((self.retry_threads as u32).div_ceil(INEXACT_BLOCK_W), 1, 1), block_dim: (INEXACT_BLOCK_W, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&self.inexact_retry);
            args.push(&mut launch, retry);
            // SAFETY: argument order and types match inexact_retry's signature.
            unsafe { launch.launch(cfg) }.context("launching inexact_retry")?;
        }
        let inexact_end = timing_event(&stream)?;
        self.scratch_free = Some(first_pass_done);
        self.retry_scratch_free = Some(stream.record_event(None)?);
        slot.k.fetch(&stream, n)?;
        slot.l.fetch(&stream, n)?;
        slot.n_hits.fetch(&stream, n_gpu)?;
        slot.hits.fetch(&stream, n_gpu * HITS_PER_READ * 3)?;
        slot.retry_counters.fetch(&stream, 2)?;
        Ok([exact_start, exact_end, inexact_start, first_pass_end, retry_start, inexact_end])
    }

    /// Waits for a queued batch; returns its inputs and, per read, the GPU's hits (`None`
    /// for reads left to the CPU: see [`batch::complete_on_cpu`]).
    pub fn collect(&mut self, flight: InFlight) -> Result<(HostBatch, Vec<Option<Vec<AlnHit>>>)> {
        let InFlight { slot, batch, events } = flight;
        let slot = self.slots[slot].as_ref().expect("slots are put back after use");
        let (n, n_gpu) = (batch.n, batch.gpu_reads.len());
        let answers = GpuAnswers { n_hits: slot.n_hits.read(n_gpu)?, hits: slot.hits.read(n_gpu * HITS_PER_READ * 3)?, hits_per_read: HITS_PER_READ };
        let hits = answers.to_hits(&batch);
        let (k, l) = (slot.k.read(n)?, slot.l.read(n)?);
        self.totals.exact_reads += k.iter().zip(l).filter(|&(&k, &l)| k <= l && !(k == 0 && l == 0)).count();
        self.totals.exact_ms += events[0].elapsed_ms(&events[1])?;
        let retry_ms = events[4].elapsed_ms(&events[5])?;
        self.totals.inexact_ms += events[2].elapsed_ms(&events[3])? + retry_ms;
        self.totals.retry_ms += retry_ms;
        self.totals.retried_reads += slot.retry_counters.read(2)?[0] as usize;
        self.totals.batches += 1;
        Ok((batch, hits))
    }

    /// One batch, start to finish: the GPU's hits, and the CPU oracle's for reads the GPU
    /// could not hold.
    pub fn align_batch(&mut self, bwt: &Bwt, reads: &[ReadSeq], opt: &GapOptions) -> Result<Vec<Vec<AlnHit>>> {
        let flight = self.submit(HostBatch::new(reads, opt, self.switches.sequence_stride))?;
        let (_, hits) = self.collect(flight)?;
        Ok(complete_on_cpu(bwt, reads, opt, Some(hits)).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel and the default switches compile with NVRTC when it is present.
    #[test]
    fn kernels_compile_with_nvrtc() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        compile(INEXACT_MATCH_CU, &[format!("-DINEXACT_BLOCK_W={INEXACT_BLOCK_W}")], Some("sm_90")).unwrap();
        let sw = Switches::default();
        compile(EXACT_MATCH_CU, &sw.defines(), Some("sm_90")).unwrap();
        for flip in 0..15 {
            let mut s = sw.clone();
            match flip {
                0 => s.kl_par = true,
                1 => s.many_blocks = true,
                2 => s.direct_sequence = false,
                3 => s.direct_index = false,
                4 => s.sequence_global = false,
                5 => s.sequence_shift81 = false,
                6 => s.sequence_stride = false,
                7 => (s.mycache4, s.mycache2) = (false, true),
                8 => s.direct_global_bwt = true,
                9 => s.cache_global_bwt = false,
                10 => s.scache_global_bwt = true,
                11 => s.cache_threads = Some(1),
                12 => s.cache_threads = Some(4),
                13 => (s.cache_threads, s.occ_par) = (Some(8), true),
                _ => (s.cache_threads, s.occ_par, s.block_w) = (Some(32), true, 256),
            }
            assert_eq!(s.illegal(), None, "{s:?}");
            compile(EXACT_MATCH_CU, &s.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        }
    }

}
