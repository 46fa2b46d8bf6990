//! `bcuda index` on the GPU: [`GpuChunkSorter`] implements the index crate's
//! [`ChunkSorter`] with the kernels of `cuda/suffix_sort.cu` (their pipeline is described
//! there; `index/src/chunk_sort.rs`'s `RadixModel` is the same on the CPU, tested in CI).
//!
//! The GPU code lives here, behind the trait, so that the index crate has no CUDA dependency:
//! it plans the chunks, refines the tied keys on the CPU, writes the rows and falls back on
//! its own CPU sort when a call here fails.
//!
//! GPU memory: the text (n/4 bytes, for the whole build), a cursor per bucket (4 x 4^k
//! bytes), and per chunk position 2 x 16 bytes of keys and 2 x 8 of positions (the sort
//! ping-pongs) plus 1/16 byte of tile histograms: [`BYTES_PER_POSITION`]. The chunk's
//! capacity is what the free memory holds after the text, less [`MEMORY_MARGIN`].

use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};
use bcuda_index::chunk_sort::{Chunk, ChunkSorter, SortError, RADIX_TILE};
use bcuda_index::text::PackedText;
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::nvrtc::{arch_for, compile_alone_cached, driver_present, nvrtc_present};

pub const SUFFIX_SORT_CU: &str = include_str!("../../cuda/suffix_sort.cu");

/// Threads per block of the grid-stride kernels and of the tile kernels (8 warps, TILE_WARPS).
const BLOCK: u32 = 256;
const TILE_WARPS: u64 = 8;
/// Items per block of scan_blocks (SCAN_BLOCK x SCAN_ITEMS of the kernel).
const SCAN_PER_BLOCK: u64 = 256 * 8;
/// GPU memory per chunk position: keys and positions twice (16 + 16 + 8 + 8), the tile
/// histograms (256 counts of 4 bytes per 4096 positions: 1/4) rounded up, and the scan sums.
pub const BYTES_PER_POSITION: u64 = 49;
/// GPU memory left free besides the buffers (the driver, the kernels, fragmentation).
pub const MEMORY_MARGIN: u64 = 1 << 30;
/// Chunks of at most this many positions (the kernels index a chunk with u32).
pub const MAX_CHUNK: u64 = 1 << 31;

/// The positions a chunk may have with `free` bytes of GPU memory left after the text and
/// the cursors.
pub fn chunk_capacity(free: u64) -> u64 {
    (free.saturating_sub(MEMORY_MARGIN) / BYTES_PER_POSITION).min(MAX_CHUNK)
}

/// The tiles of the radix sort of `m` keys.
pub fn tiles(m: u64) -> u64 {
    m.div_ceil(RADIX_TILE as u64)
}

/// The lengths scanned at each level of the exclusive scan of `len` items: `len`, then the
/// block sums of each level until one block holds them all.
pub fn scan_levels(len: u64) -> Vec<u64> {
    let mut levels = vec![len];
    while *levels.last().expect("one level") > SCAN_PER_BLOCK {
        let last = *levels.last().expect("one level");
        levels.push(last.div_ceil(SCAN_PER_BLOCK));
    }
    levels
}

/// Blocks for a grid-stride kernel over `items`: enough to fill the GPU, no more than needed.
pub fn stride_blocks(items: u64, sms: u32) -> u32 {
    items.div_ceil(BLOCK as u64).clamp(1, sms as u64 * 32) as u32
}

struct Kernels {
    count_buckets: CudaFunction,
    gather_chunk: CudaFunction,
    make_keys: CudaFunction,
    varying_bits: CudaFunction,
    tile_histograms: CudaFunction,
    scan_blocks: CudaFunction,
    add_block_offsets: CudaFunction,
    scatter: CudaFunction,
    finish: CudaFunction,
}

/// The per-chunk buffers, allocated once for the largest chunk.
struct ChunkBuffers {
    len: u64,
    /// Keys as (high, low) u64 pairs, twice; positions twice (the last doubles as the output).
    keys: [CudaSlice<u64>; 2],
    vals: [CudaSlice<u64>; 2],
    /// Tile histograms (256 per tile), then the block sums of each scan level after the first.
    hist: CudaSlice<u32>,
    sums: Vec<CudaSlice<u32>>,
    mask: CudaSlice<u64>,
}

/// Seconds of GPU work per step, summed over chunks (host clocks around synchronous steps).
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuSortTimes {
    pub upload_s: f64,
    pub count_s: f64,
    pub sort_s: f64,
    pub download_s: f64,
    pub passes: usize,
    pub skipped_passes: usize,
}

pub struct GpuChunkSorter {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    arch: &'static str,
    sms: u32,
    kernels: Kernels,
    text: Option<CudaSlice<u64>>,
    n: u64,
    k: u32,
    cursors: Option<CudaSlice<u32>>,
    buffers: Option<ChunkBuffers>,
    capacity: u64,
    fail_chunk: Option<usize>,
    times: Arc<Mutex<GpuSortTimes>>,
}

impl GpuChunkSorter {
    /// Opens GPU `ordinal` and compiles the kernels (NVRTC, or the kernel cache).
    pub fn open(ordinal: usize) -> Result<GpuChunkSorter> {
        if !driver_present() {
            bail!("no CUDA driver found (libcuda could not be loaded)");
        }
        if !nvrtc_present() {
            bail!("no NVRTC found (libnvrtc could not be loaded)");
        }
        let ctx = CudaContext::new(ordinal).with_context(|| format!("opening GPU {ordinal}"))?;
        let cc = ctx.compute_capability()?;
        if cc.0 < 7 {
            bail!(
                "GPU {ordinal} has compute capability {}.{}; the index kernels need 7.0 (__match_any_sync)",
                cc.0,
                cc.1
            );
        }
        let name = format!("GPU {ordinal} ({})", ctx.name()?);
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let module = compile_alone_cached(SUFFIX_SORT_CU, &[], arch_for(cc))?.load(&ctx)?;
        let f = |name: &str| module.load_function(name).with_context(|| format!("loading kernel {name}"));
        let kernels = Kernels {
            count_buckets: f("count_buckets")?,
            gather_chunk: f("gather_chunk")?,
            make_keys: f("make_keys")?,
            varying_bits: f("varying_bits")?,
            tile_histograms: f("tile_histograms")?,
            scan_blocks: f("scan_blocks")?,
            add_block_offsets: f("add_block_offsets")?,
            scatter: f("scatter")?,
            finish: f("finish")?,
        };
        let stream = ctx.default_stream();
        Ok(GpuChunkSorter {
            ctx,
            stream,
            name,
            arch: arch_for(cc),
            sms,
            kernels,
            text: None,
            n: 0,
            k: 0,
            cursors: None,
            buffers: None,
            capacity: 0,
            fail_chunk: crate::test_hooks::failing_index_chunk(),
            times: Arc::default(),
        })
    }

    /// The GPU's architecture, as NVRTC names it.
    pub fn arch(&self) -> &'static str {
        self.arch
    }

    /// The times of the GPU's steps, shared (the build owns the sorter).
    pub fn times(&self) -> Arc<Mutex<GpuSortTimes>> {
        self.times.clone()
    }

    fn stride_cfg(&self, items: u64) -> LaunchConfig {
        LaunchConfig { grid_dim: (stride_blocks(items, self.sms), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
    }

    fn prepare_inner(&mut self, text: &PackedText, k: u32) -> Result<Vec<u64>> {
        self.ctx.bind_to_thread()?;
        let stream = self.stream.clone();
        let t = std::time::Instant::now();
        let d_text = stream.clone_htod(text.words()).context("copying the text to the GPU")?;
        stream.synchronize()?;
        self.times.lock().expect("times").upload_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let n_buckets = 1usize << (2 * k);
        let mut counts = stream.alloc_zeros::<u64>(n_buckets)?;
        let n = text.len();
        let mut launch = stream.launch_builder(&self.kernels.count_buckets);
        launch.arg(&d_text).arg(&n).arg(&k).arg(&mut counts);
        // SAFETY: the arguments match count_buckets(t, n, k, counts); counts has 4^k entries.
        unsafe { launch.launch(self.stride_cfg(n)) }.context("launching count_buckets")?;
        let host = stream.clone_dtoh(&counts)?;
        stream.synchronize()?;
        drop(counts);
        self.cursors = Some(stream.alloc_zeros::<u32>(n_buckets)?);
        self.times.lock().expect("times").count_s = t.elapsed().as_secs_f64();
        let (free, _) = self.ctx.mem_get_info()?;
        self.capacity = chunk_capacity(free as u64);
        (self.text, self.n, self.k) = (Some(d_text), n, k);
        Ok(host)
    }

    /// The chunk buffers, for `len` positions (allocated at the first chunk, for the largest).
    fn buffers(&mut self, len: u64) -> Result<&ChunkBuffers> {
        if self.buffers.as_ref().is_none_or(|b| b.len < len) {
            self.buffers = None;
            let stream = &self.stream;
            let hist_len = 256 * tiles(len);
            let levels = scan_levels(hist_len);
            // SAFETY: every buffer is written by a kernel before it is read.
            let b = unsafe {
                ChunkBuffers {
                    len,
                    keys: [stream.alloc::<u64>(2 * len as usize)?, stream.alloc::<u64>(2 * len as usize)?],
                    vals: [stream.alloc::<u64>(len as usize)?, stream.alloc::<u64>(len as usize)?],
                    hist: stream.alloc::<u32>(hist_len as usize)?,
                    sums: levels
                        .iter()
                        .map(|&l| stream.alloc::<u32>(l.div_ceil(SCAN_PER_BLOCK) as usize))
                        .collect::<Result<_, _>>()?,
                    mask: stream.alloc_zeros::<u64>(2)?,
                }
            };
            self.buffers = Some(b);
        }
        Ok(self.buffers.as_ref().expect("allocated above"))
    }

    fn sort_inner(&mut self, chunk: &Chunk, out: &mut [u64]) -> Result<()> {
        if self.fail_chunk == Some(chunk.index + 1) {
            bail!("chunk {} failed on purpose (BCUDA_TEST_FAIL_INDEX_CHUNK)", chunk.index + 1);
        }
        self.ctx.bind_to_thread()?;
        let m = chunk.len();
        if out.len() as u64 != m {
            bail!("output of {} slots for a chunk of {m}", out.len());
        }
        if m == 0 {
            return Ok(());
        }
        if m > self.capacity || m > MAX_CHUNK {
            bail!("a chunk of {m} positions is over the GPU's capacity of {}", self.capacity);
        }
        let t = std::time::Instant::now();
        let stream = self.stream.clone();
        let (n, k, lo, hi) = (self.n, self.k, chunk.lo as u64, chunk.hi as u64);
        let m32 = m as u32;
        let base = chunk.first_row();
        let cursor_init: Vec<u32> = chunk.starts[chunk.lo..chunk.hi].iter().map(|&s| (s - base) as u32).collect();
        self.buffers(chunk.largest.max(m))?;
        let (Some(text), Some(cursors), Some(b)) = (self.text.as_ref(), self.cursors.as_mut(), self.buffers.as_mut())
        else {
            bail!("sort_chunk before prepare");
        };
        let k_ = &self.kernels;
        let cfg = |items: u64| LaunchConfig {
            grid_dim: (stride_blocks(items, self.sms), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };

        // gather_chunk: positions into their buckets' slots.
        stream.memcpy_htod(&cursor_init, &mut cursors.slice_mut(..cursor_init.len()))?;
        let [keys0, keys1] = &mut b.keys;
        let [vals0, vals1] = &mut b.vals;
        let mut launch = stream.launch_builder(&k_.gather_chunk);
        launch.arg(text).arg(&n).arg(&k).arg(&lo).arg(&hi).arg(&mut *cursors).arg(&mut *vals0);
        // SAFETY: gather_chunk(t, n, k, lo, hi, cursor, pos): the cursors cover lo..hi and
        // start at the buckets' first slots, so every slot written is below m.
        unsafe { launch.launch(cfg(n)) }.context("launching gather_chunk")?;
        let mut launch = stream.launch_builder(&k_.make_keys);
        launch.arg(text).arg(&n).arg(&*vals0).arg(&m32).arg(&mut *keys0);
        // SAFETY: make_keys(t, n, pos, m, keys): keys holds 2m u64.
        unsafe { launch.launch(cfg(m)) }.context("launching make_keys")?;
        stream.memset_zeros(&mut b.mask)?;
        let mut launch = stream.launch_builder(&k_.varying_bits);
        launch.arg(&*keys0).arg(&m32).arg(&mut b.mask);
        // SAFETY: varying_bits(keys, m, mask): m >= 1.
        unsafe { launch.launch(cfg(m)) }.context("launching varying_bits")?;
        let mask = stream.clone_dtoh(&b.mask)?;
        stream.synchronize()?;
        let varying = varying_digits_of_mask(mask[0], mask[1]);

        let n_tiles = tiles(m);
        let tiles32 = n_tiles as u32;
        let hist_len = 256 * n_tiles;
        let tile_cfg = LaunchConfig {
            grid_dim: (n_tiles.div_ceil(TILE_WARPS) as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let (mut cur_keys, mut cur_vals, mut alt_keys, mut alt_vals) = (keys0, vals0, keys1, vals1);
        let (mut passes, mut skipped) = (0, 0);
        for d in 0..16u32 {
            if !varying[d as usize] {
                skipped += 1;
                continue;
            }
            passes += 1;
            let mut launch = stream.launch_builder(&k_.tile_histograms);
            launch.arg(&*cur_keys).arg(&m32).arg(&d).arg(&tiles32).arg(&mut b.hist);
            // SAFETY: tile_histograms(keys, m, d, tiles, hist): hist holds 256 x tiles.
            unsafe { launch.launch(tile_cfg) }.context("launching tile_histograms")?;
            Self::scan_with(k_, &cfg, &stream, &mut b.hist, &mut b.sums, hist_len)?;
            let mut launch = stream.launch_builder(&k_.scatter);
            launch
                .arg(&*cur_keys)
                .arg(&*cur_vals)
                .arg(&m32)
                .arg(&d)
                .arg(&tiles32)
                .arg(&b.hist)
                .arg(&mut *alt_keys)
                .arg(&mut *alt_vals);
            // SAFETY: scatter(keys, vals, m, d, tiles, offsets, keys_out, vals_out): the scanned
            // offsets place the m keys on slots 0..m.
            unsafe { launch.launch(tile_cfg) }.context("launching scatter")?;
            std::mem::swap(&mut cur_keys, &mut alt_keys);
            std::mem::swap(&mut cur_vals, &mut alt_vals);
        }
        let mut launch = stream.launch_builder(&k_.finish);
        launch.arg(text).arg(&*cur_keys).arg(&*cur_vals).arg(&m32).arg(&mut *alt_vals);
        // SAFETY: finish(t, keys, vals, m, out): out (the other positions buffer) holds m.
        unsafe { launch.launch(cfg(m)) }.context("launching finish")?;
        stream.synchronize().context("sorting the chunk on the GPU")?;
        let sort_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        stream.memcpy_dtoh(&alt_vals.slice(..m as usize), out)?;
        stream.synchronize().context("copying the sorted chunk back")?;
        let mut times = self.times.lock().expect("times");
        times.sort_s += sort_s;
        times.download_s += t.elapsed().as_secs_f64();
        times.passes += passes;
        times.skipped_passes += skipped;
        Ok(())
    }

    /// Exclusive scan of `data[..len]` in place, by levels of block sums (see [`scan_levels`]).
    fn scan_with(
        k: &Kernels,
        cfg: &dyn Fn(u64) -> LaunchConfig,
        stream: &Arc<CudaStream>,
        data: &mut CudaSlice<u32>,
        sums: &mut [CudaSlice<u32>],
        len: u64,
    ) -> Result<()> {
        let blocks = len.div_ceil(SCAN_PER_BLOCK);
        let scan_cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let (level, rest) = sums.split_first_mut().ok_or_else(|| anyhow!("no scan level left"))?;
        let mut launch = stream.launch_builder(&k.scan_blocks);
        launch.arg(&mut *data).arg(&len).arg(&mut *level);
        // SAFETY: scan_blocks(data, len, sums): `level` has one entry per block.
        unsafe { launch.launch(scan_cfg) }.context("launching scan_blocks")?;
        if blocks > 1 {
            Self::scan_with(k, cfg, stream, level, rest, blocks)?;
            let mut launch = stream.launch_builder(&k.add_block_offsets);
            launch.arg(&mut *data).arg(&len).arg(&*level);
            // SAFETY: add_block_offsets(data, len, offsets): one offset per scan block.
            unsafe { launch.launch(cfg(len)) }.context("launching add_block_offsets")?;
        }
        Ok(())
    }
}

/// Which of the 16 digits (0 = lowest byte of the low word) vary, from the bits in which some
/// key differs from the first (varying_bits).
pub fn varying_digits_of_mask(high: u64, low: u64) -> [bool; 16] {
    std::array::from_fn(|d| if d < 8 { low >> (8 * d) & 0xff != 0 } else { high >> (8 * (d - 8)) & 0xff != 0 })
}

impl ChunkSorter for GpuChunkSorter {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn prepare(&mut self, text: &PackedText, k: u32) -> std::result::Result<Option<Vec<u64>>, SortError> {
        self.prepare_inner(text, k).map(Some).map_err(|e| format!("{e:#}").into())
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn sort_chunk(&mut self, chunk: &Chunk, out: &mut [u64]) -> std::result::Result<(), SortError> {
        self.sort_inner(chunk, out).map_err(|e| format!("{e:#}").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcuda_index::chunk_sort::varying_digits;

    /// The kernels compile with NVRTC when it is present (CI installs it; no GPU needed).
    #[test]
    fn suffix_sort_kernels_compile_with_nvrtc() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        let ptx = super::super::nvrtc::compile_alone(SUFFIX_SORT_CU, &[], Some("sm_90")).unwrap();
        for k in [
            "count_buckets",
            "gather_chunk",
            "make_keys",
            "varying_bits",
            "tile_histograms",
            "scan_blocks",
            "add_block_offsets",
            "scatter",
            "finish",
        ] {
            assert!(ptx.contains(&format!(".entry {k}(")), "{k} missing from the PTX");
        }
    }

    /// The kernel's constants are the host's and the CPU model's.
    #[test]
    fn kernel_constants_match_the_host() {
        let define = |name: &str| -> u64 {
            let line = SUFFIX_SORT_CU
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name}"));
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        assert_eq!(define("TILE"), RADIX_TILE as u64);
        assert_eq!(define("TILE_WARPS"), TILE_WARPS);
        assert_eq!(define("SCAN_BLOCK") * define("SCAN_ITEMS"), SCAN_PER_BLOCK);
        assert_eq!(define("SCAN_BLOCK"), BLOCK as u64);
        assert_eq!(bcuda_index::chunk_sort::TIED, 1 << 61);
    }

    #[test]
    fn scan_levels_end_in_one_block() {
        assert_eq!(scan_levels(1), vec![1]);
        assert_eq!(scan_levels(2048), vec![2048]);
        assert_eq!(scan_levels(2049), vec![2049, 2]);
        // A chunk of 2^31 positions: 2^19 tiles, 2^27 histogram entries.
        let levels = scan_levels(256 * tiles(MAX_CHUNK));
        assert_eq!(levels, vec![1 << 27, 1 << 16, 32]);
        for w in levels.windows(2) {
            assert_eq!(w[1], w[0].div_ceil(SCAN_PER_BLOCK));
        }
        // Grid sizes stay within CUDA's limit (2^31 - 1 blocks in x).
        assert!(levels[0].div_ceil(SCAN_PER_BLOCK) < (1 << 31));
        assert!(tiles(MAX_CHUNK).div_ceil(TILE_WARPS) < (1 << 31));
    }

    #[test]
    fn capacity_and_grids() {
        assert_eq!(chunk_capacity(0), 0);
        assert_eq!(chunk_capacity(MEMORY_MARGIN + 49 * 1000), 1000);
        // An H100 with the 3.1 Gbp text on it (1.55 GB) still takes the largest chunks.
        assert_eq!(chunk_capacity(78 << 30), MAX_CHUNK.min(((78u64 << 30) - MEMORY_MARGIN) / BYTES_PER_POSITION));
        assert!(chunk_capacity(78 << 30) > 1 << 30);
        assert_eq!(stride_blocks(0, 132), 1);
        assert_eq!(stride_blocks(1000, 132), 4);
        assert_eq!(stride_blocks(6_200_000_000, 132), 132 * 32);
        assert_eq!(tiles(1), 1);
        assert_eq!(tiles(4097), 2);
    }

    #[test]
    fn varying_digits_from_the_mask_match_the_model() {
        let keys = [
            0x0102_0000_0000_0000_0000_0000_0000_00ffu128,
            0x0103_0000_0000_0000_0000_0000_0000_0000,
            0x0102_0000_0000_0000_0000_0000_0000_00ff,
        ];
        let first = keys[0];
        let diff = keys.iter().fold(0u128, |acc, &k| acc | (k ^ first));
        assert_eq!(varying_digits_of_mask((diff >> 64) as u64, diff as u64), varying_digits(&keys));
    }
}
