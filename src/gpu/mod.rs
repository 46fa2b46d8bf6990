//! GPU driver: the kernels of `cuda/` compiled at run time with NVRTC and run through cudarc.
//!
//! `exact_match` gives each read's exact SA interval; `inexact_match` runs BWA's full aln
//! search per read (the CPU oracle's algorithm, same hits). Reads that do not fit the GPU's
//! per-thread scratch (longer than [`GPU_MAX_LEN`], or a stack or hit list that overflows)
//! are aligned on the CPU, so the .sai is identical whatever the GPU does.

pub mod bench;
pub mod switches;

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use bcuda_index::Bwt;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use rayon::prelude::*;

use crate::aln::search::{align_read, batch_options, cal_maxdiff, Scratch, AVG_ERR};
use crate::reads::ReadSeq;
use crate::sai::{AlnHit, GapOptions};
pub use switches::Switches;

/// Longest read the GPU aligns; longer ones go to the CPU.
pub const GPU_MAX_LEN: usize = 512;
/// Stack entries per GPU thread before a read is handed to the CPU.
const ENTRIES_PER_THREAD: usize = 2048;
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

/// Timings of the last batch, from GPU events (milliseconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchTimes {
    pub exact_ms: f32,
    pub inexact_ms: f32,
    pub cpu_fallback_reads: usize,
    pub exact_reads: usize,
    /// Wall time of align_batch: host preparation, transfers, kernels and CPU fallback.
    pub batch_ms: f32,
}

/// Per-thread working memory of inexact_match, kept across batches and grown on demand.
/// Left uninitialised: the kernel writes every cell before reading it.
struct Scratchpad {
    /// (threads, max_len, buckets, reads) it was sized for.
    size: (usize, usize, usize, usize),
    width: CudaSlice<u8>,
    seed_width: CudaSlice<u8>,
    seq: CudaSlice<u8>,
    entries: CudaSlice<u8>,
    heads: CudaSlice<i32>,
    hits: CudaSlice<u64>,
    n_hits: CudaSlice<i32>,
}

impl Scratchpad {
    fn fits(&self, threads: usize, max_len: usize, buckets: usize, reads: usize) -> bool {
        let (t, m, b, r) = self.size;
        threads <= t && max_len <= m && buckets <= b && reads <= r
    }

    fn new(stream: &Arc<CudaStream>, t: usize, m: usize, b: usize, r: usize) -> Result<Scratchpad> {
        // SAFETY: inexact_match initialises every element before reading it.
        unsafe {
            Ok(Scratchpad {
                size: (t, m, b, r),
                width: stream.alloc::<u8>(t * (m + 1) * 16)?,
                seed_width: stream.alloc::<u8>(t * (m + 1) * 16)?,
                seq: stream.alloc::<u8>(t * m)?,
                entries: stream.alloc::<u8>(t * ENTRIES_PER_THREAD * 40)?,
                heads: stream.alloc::<i32>(t * b)?,
                hits: stream.alloc::<u64>(r * HITS_PER_READ * 3)?,
                n_hits: stream.alloc::<i32>(r)?,
            })
        }
    }
}

pub struct GpuAligner {
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
    arch: &'static str,
    pub device_name: String,
    pub compute_capability: (i32, i32),
    pub last: BatchTimes,
    /// Sums over all batches.
    pub totals: BatchTimes,
    /// Reads per inexact launch: the batch size, rounded to whole waves of the GPU, halved
    /// when the GPU runs out of memory.
    pub launch_reads: usize,
    scratch: Option<Scratchpad>,
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
        let sms = ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        let wave = sms.max(1) * INEXACT_BLOCK_W as usize;
        let launch_reads = batch_size.max(1).div_ceil(wave) * wave;
        let stream = ctx.default_stream();
        let words = stream.clone_htod(bwt.words()).context("copying the BWT to the GPU")?;
        let l2 = stream.clone_htod(&bwt.l2())?;
        let inexact_ptx = compile_cached(INEXACT_MATCH_CU, &[format!("-DINEXACT_BLOCK_W={INEXACT_BLOCK_W}")], arch)?;
        let inexact = ctx.load_module(cudarc::nvrtc::Ptx::from_src(inexact_ptx))?.load_function("inexact_match")?;
        let mut aligner = GpuAligner {
            stream,
            words,
            l2,
            primary: bwt.primary(),
            seq_len: bwt.seq_len(),
            switches,
            exact_source: EXACT_MATCH_CU.to_string(),
            exact: HashMap::new(),
            inexact,
            arch,
            device_name,
            compute_capability,
            last: BatchTimes::default(),
            totals: BatchTimes::default(),
            launch_reads,
            scratch: None,
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
        let f = self.stream.context().load_module(cudarc::nvrtc::Ptx::from_src(ptx))?.load_function("exact_match")?;
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

    pub fn switches(&self) -> &Switches {
        &self.switches
    }

    /// Exact SA intervals of all reads (k = l = 0 for reads with N; k > l for no match).
    pub fn exact_match(&mut self, reads: &[ReadSeq]) -> Result<(Vec<u64>, Vec<u64>, f32)> {
        let n = reads.len();
        let lens: Vec<u16> = reads.iter().map(|r| r.len as u16).collect();
        let fixed = lens.iter().all(|&l| l == lens[0]);
        let direct_index = self.switches.direct_index && fixed;
        let f = self.exact_function(direct_index)?;
        let (packed, starts) = pack_reads(reads, self.switches.sequence_stride);
        let d_reads = self.stream.clone_htod(&packed)?;
        let d_starts = self.stream.clone_htod(&starts)?;
        let d_lens = self.stream.clone_htod(&lens)?;
        let mut d_k = self.stream.alloc_zeros::<u64>(n)?;
        let mut d_l = self.stream.alloc_zeros::<u64>(n)?;
        let threads = if self.switches.kl_par { 2 * n } else { n } as u64;
        let bw = self.switches.block_w;
        let blocks = threads.div_ceil(bw as u64) as u32;
        let grid = if self.switches.many_blocks { (blocks.min(65535), blocks.div_ceil(65535), 1) } else { (blocks, 1, 1) };
        let cfg = LaunchConfig { grid_dim: grid, block_dim: (bw, 1, 1), shared_mem_bytes: 0 };
        let (n32, fixed_len) = (n as u32, lens.first().copied().unwrap_or(0) as u32);
        let start = self.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let mut launch = self.stream.launch_builder(&f);
        launch.arg(&self.words).arg(&self.primary).arg(&self.seq_len).arg(&self.l2);
        launch.arg(&d_reads).arg(&d_starts).arg(&d_lens).arg(&n32).arg(&fixed_len).arg(&mut d_k).arg(&mut d_l);
        // SAFETY: argument order and types match exact_match's signature.
        unsafe { launch.launch(cfg) }.context("launching exact_match")?;
        let end = self.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let k = self.stream.clone_dtoh(&d_k)?;
        let l = self.stream.clone_dtoh(&d_l)?;
        let ms = start.elapsed_ms(&end)?;
        Ok((k, l, ms))
    }

    /// BWA's aln search for a batch: the same hits as the CPU path, read by read.
    pub fn align_batch(&mut self, bwt: &Bwt, reads: &[ReadSeq], opt: &GapOptions) -> Result<Vec<Vec<AlnHit>>> {
        let wall = std::time::Instant::now();
        let n = reads.len();
        let max_len = reads.iter().map(|r| r.len).max().unwrap_or(0);
        let batch_opt = batch_options(opt, max_len);
        let (ek, el, exact_ms) = self.exact_match(reads)?;
        let exact_reads = ek.iter().zip(&el).filter(|&(&k, &l)| k <= l && !(k == 0 && l == 0)).count();

        let gpu_reads: Vec<usize> = (0..n).filter(|&i| reads[i].len <= GPU_MAX_LEN && reads[i].len > 0).collect();
        let mut codes = Vec::new();
        let mut starts = Vec::with_capacity(gpu_reads.len());
        let mut lens = Vec::with_capacity(gpu_reads.len());
        let mut max_diffs = Vec::with_capacity(gpu_reads.len());
        for &i in &gpu_reads {
            starts.push(codes.len() as u64);
            codes.extend_from_slice(reads[i].aligned());
            lens.push(reads[i].len as u16);
            max_diffs.push(if opt.fnr > 0.0 { cal_maxdiff(reads[i].len as i32, AVG_ERR, opt.fnr as f64) } else { batch_opt.max_diff });
        }
        let n_gpu = gpu_reads.len();
        let mut results: Vec<Option<Vec<AlnHit>>> = vec![None; n];
        let mut inexact_ms = 0f32;
        if n_gpu > 0 {
            let opt_words: [u32; 16] = bytemuck::cast(batch_opt);
            let d_opt = self.stream.clone_htod(&opt_words)?;
            let d_codes = self.stream.clone_htod(&codes)?;
            let d_starts = self.stream.clone_htod(&starts)?;
            let d_lens = self.stream.clone_htod(&lens)?;
            let d_max_diff = self.stream.clone_htod(&max_diffs)?;
            let n_buckets = (crate::aln::search::aln_score(batch_opt.max_diff + 1, batch_opt.max_gapo + 1, batch_opt.max_gape + 1, &batch_opt).max(1)) as i32;
            let chunk = self.launch_reads.min(n_gpu);
            let ml = max_len.min(GPU_MAX_LEN) as i32;
            if !self.scratch.as_ref().is_some_and(|s| s.fits(chunk, ml as usize, n_buckets as usize, n_gpu)) {
                let old = self.scratch.take().map_or((0, 0, 0, 0), |s| s.size);
                let (t, m, b, r) = (chunk.max(old.0), (ml as usize).max(old.1), (n_buckets as usize).max(old.2), n_gpu.max(old.3));
                self.scratch = Some(Scratchpad::new(&self.stream, t, m, b, r)?);
            }
            let Some(Scratchpad { width: d_width, seed_width: d_seed_width, seq: d_seq, entries: d_entries, heads: d_heads, hits: d_hits, n_hits: d_n_hits, .. }) =
                self.scratch.as_mut()
            else {
                unreachable!("scratch was just reserved")
            };
            let (d_width, d_seed_width, d_seq, d_entries, d_heads) = (&*d_width, &*d_seed_width, &*d_seq, &*d_entries, &*d_heads);
            let start = self.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
            let (entries, hits_per_read) = (ENTRIES_PER_THREAD as i32, HITS_PER_READ as i32);
            for first in (0..n_gpu).step_by(chunk) {
                let count = chunk.min(n_gpu - first) as u32;
                let first = first as u32;
                let cfg = LaunchConfig { grid_dim: (count.div_ceil(INEXACT_BLOCK_W), 1, 1), block_dim: (INEXACT_BLOCK_W, 1, 1), shared_mem_bytes: 0 };
                let mut launch = self.stream.launch_builder(&self.inexact);
                launch.arg(&self.words).arg(&self.primary).arg(&self.seq_len).arg(&self.l2).arg(&d_opt);
                launch.arg(&d_codes).arg(&d_starts).arg(&d_lens).arg(&d_max_diff).arg(&count);
                launch.arg(d_width).arg(d_seed_width).arg(d_seq).arg(&ml);
                launch.arg(d_entries).arg(d_heads).arg(&entries).arg(&n_buckets);
                launch.arg(&mut *d_hits).arg(&hits_per_read).arg(&mut *d_n_hits).arg(&first);
                // SAFETY: argument order and types match inexact_match's signature.
                unsafe { launch.launch(cfg) }.context("launching inexact_match")?;
            }
            let end = self.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))?;
            let n_hits = self.stream.clone_dtoh(&d_n_hits.slice(..n_gpu))?;
            let hits = self.stream.clone_dtoh(&d_hits.slice(..n_gpu * HITS_PER_READ * 3))?;
            inexact_ms = start.elapsed_ms(&end)?;
            for (j, &i) in gpu_reads.iter().enumerate() {
                if n_hits[j] < 0 {
                    continue;
                }
                let base = j * HITS_PER_READ * 3;
                results[i] = Some(
                    (0..n_hits[j] as usize)
                        .map(|h| {
                            let mut bytes = [0u8; AlnHit::BYTES];
                            for (w, chunk) in bytes.chunks_mut(8).enumerate() {
                                chunk.copy_from_slice(&hits[base + 3 * h + w].to_le_bytes());
                            }
                            AlnHit::from_bytes(&bytes)
                        })
                        .collect(),
                );
            }
        }
        // Whatever the GPU could not hold goes through the CPU oracle.
        let fallback = results.iter().filter(|r| r.is_none()).count();
        let out = results
            .into_par_iter()
            .zip(reads)
            .map_init(Scratch::default, |scratch, (r, read)| r.unwrap_or_else(|| align_read(bwt, read.aligned(), &batch_opt, scratch)))
            .collect();
        let batch_ms = wall.elapsed().as_secs_f32() * 1000.0;
        self.last = BatchTimes { exact_ms, inexact_ms, cpu_fallback_reads: fallback, exact_reads, batch_ms };
        self.totals.batch_ms += batch_ms;
        self.totals.exact_ms += exact_ms;
        self.totals.inexact_ms += inexact_ms;
        self.totals.cpu_fallback_reads += fallback;
        self.totals.exact_reads += exact_reads;
        Ok(out)
    }
}

/// 4-bit read codes, 8 per u32 (first base in the low bits), in groups of 32 reads with words
/// interleaved (`stride`) or read after read; returns the words and each read's first index.
pub fn pack_reads(reads: &[ReadSeq], stride: bool) -> (Vec<u32>, Vec<u64>) {
    let words_of = |r: &ReadSeq| r.len.div_ceil(8);
    let mut packed = Vec::new();
    let mut starts = Vec::with_capacity(reads.len());
    for group in reads.chunks(32) {
        let wpr = group.iter().map(words_of).max().unwrap_or(0);
        let base = packed.len();
        if stride {
            packed.resize(base + 32 * wpr, 0);
        }
        for (m, r) in group.iter().enumerate() {
            let start = if stride { base } else { packed.len() };
            starts.push(start as u64);
            if !stride {
                packed.resize(packed.len() + words_of(r), 0);
            }
            for (j, &c) in r.aligned().iter().enumerate() {
                let idx = if stride { start + (j / 8) * 32 + m } else { start + j / 8 };
                packed[idx] |= (c as u32) << ((j % 8) * 4);
            }
        }
    }
    (packed, starts)
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

    #[test]
    fn packing_places_bases_in_nibbles() {
        let read = |codes: Vec<u8>| ReadSeq { len: codes.len(), codes, ..Default::default() };
        let reads = vec![read(vec![0, 1, 2, 3, 4, 0, 1, 2, 3]), read(vec![3; 9])];
        let (p, s) = pack_reads(&reads, false);
        assert_eq!(s, vec![0, 2]);
        assert_eq!(p[0], 0x2104_3210);
        assert_eq!(p[1], 3);
        let (p, s) = pack_reads(&reads, true);
        assert_eq!(s, vec![0, 0]);
        assert_eq!(p[0], 0x2104_3210);
        assert_eq!(p[1], 0x3333_3333);
        assert_eq!(p[32], 3);
    }
}
