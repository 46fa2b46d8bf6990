//! `bcuda-dev copy-bench FILE`: how fast a large host file (a `.bwt`) reaches the GPU, by each
//! way start-up could copy it: the staging `aln` uses, other staging shapes, the file's pages
//! registered with the driver (no host copy), and a plain pageable copy. Start-up waits for
//! this copy after the GPU's context opens, so its rate against the link's sets that part.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use bcuda::gpu::host_copy::{copy_staged, Staging, STAGING};
use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream};

#[derive(clap::Args, Debug)]
pub struct CopyBenchArgs {
    /// The file to copy (its page-cache copy is read through a memory map, as aln reads the BWT).
    pub file: std::path::PathBuf,
    /// Times each way is run (the best is printed).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
}

pub fn run(args: CopyBenchArgs) -> Result<()> {
    anyhow::ensure!(bcuda::gpu::driver_present(), "no CUDA driver found (libcuda could not be loaded)");
    let file = std::fs::File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?;
    // SAFETY: the file is only read, and not changed while it is mapped (a benchmark input).
    let map = unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("mapping {}", args.file.display()))?;
    let _ = map.advise(memmap2::Advice::PopulateRead);
    let words: &[u32] = bytemuck::cast_slice(&map[..map.len() / 4 * 4]);
    // As in a .bwt, whose words start after its header: the pieces' ends are not page-aligned.
    let words = &words[words.len().min(5)..];
    let t = Instant::now();
    let ctx = CudaContext::new(0)?;
    eprintln!("context {:.3} s", t.elapsed().as_secs_f64());
    let stream = ctx.default_stream();
    // SAFETY: every way below writes the whole buffer before it is compared.
    let mut dev = unsafe { stream.alloc::<u32>(words.len()) }?;
    let gb = (words.len() * 4) as f64 / 1e9;
    println!("way\tGB\tbest_s\tGB_per_s");
    let mut ways: Vec<(String, Staging)> = vec![("staged (aln's)".into(), STAGING)];
    for (piece_mb, buffers, wc) in [(64, 2, false), (32, 4, true), (16, 8, true), (128, 3, true), (256, 2, true)] {
        let s = Staging { piece_bytes: piece_mb << 20, buffers, write_combined: wc };
        ways.push((format!("staged {piece_mb} MB x {buffers}{}", if wc { "" } else { " cached" }), s));
    }
    for (name, staging) in &ways {
        let best = best_of(args.repeats, || copy_staged(&stream, words, &mut dev, *staging))?;
        println!("{name}\t{gb:.2}\t{best:.3}\t{:.1}", gb / best);
    }
    for piece_mb in [64, 16, 32, 128, 256, 4096] {
        let best = best_of(args.repeats, || copy_registered_in(&stream, words, &mut dev, piece_mb << 20))?;
        let name = format!("registered {piece_mb} MB pieces");
        println!("{name}\t{gb:.2}\t{best:.3}\t{:.1}", gb / best);
        let back = stream.clone_dtoh(&dev)?;
        anyhow::ensure!(back == words, "the registered copy on the GPU differs from the file");
    }
    let best = best_of(args.repeats, || Ok(stream.memcpy_htod(words, &mut dev)?))?;
    println!("pageable\t{gb:.2}\t{best:.3}\t{:.1}", gb / best);
    let back = stream.clone_dtoh(&dev)?;
    anyhow::ensure!(back == words, "the copy on the GPU differs from the file");
    Ok(())
}

fn best_of(repeats: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut best = f64::MAX;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// The host's page: registration pins whole pages, so pieces are cut at page boundaries.
const PAGE: usize = 4096;

/// Copies `data` (pages of a memory-mapped file) to `dev` with no host copy: each piece of
/// `piece` bytes (whole pages) is registered with the driver (page-locked where it lies,
/// read-only) and its copy queued at once, so that registering the next overlaps it.
fn copy_registered_in(stream: &Arc<CudaStream>, data: &[u32], dev: &mut CudaSlice<u32>, piece: usize) -> Result<()> {
    let piece = piece.max(1).div_ceil(PAGE) * PAGE;
    let start = data.as_ptr() as usize;
    let end = start + std::mem::size_of_val(data);
    anyhow::ensure!(start.is_multiple_of(4) && dev.len() >= data.len(), "an unaligned array or a short buffer");
    let mut registered = Registered { stream, pages: Vec::new() };
    // A mapping starts on a page, so the page under `data`'s first byte is inside it.
    let mut at = start / PAGE * PAGE;
    while at < end {
        let next = (at + piece).min(end.div_ceil(PAGE) * PAGE);
        registered.add(at, next - at)?;
        let (lo, hi) = ((at.max(start) - start) / 4, (next.min(end) - start) / 4);
        stream.memcpy_htod(&data[lo..hi], &mut dev.slice_mut(lo..hi))?;
        at = next;
    }
    stream.synchronize()?;
    Ok(())
}

/// Host ranges registered with the driver, unregistered when dropped, once the stream's copies
/// from them are done.
struct Registered<'a> {
    stream: &'a Arc<CudaStream>,
    pages: Vec<*mut c_void>,
}

impl Registered<'_> {
    /// Registers `len` bytes of whole pages from `at`, read-only.
    fn add(&mut self, at: usize, len: usize) -> Result<()> {
        let p = at as *mut c_void;
        // SAFETY: the pages lie under the caller's `data` (rounded out to pages of its mapping),
        // which stays borrowed, so mapped, while they are registered; the driver only reads them.
        unsafe { sys::cuMemHostRegister_v2(p, len, sys::CU_MEMHOSTREGISTER_READ_ONLY) }.result()?;
        self.pages.push(p);
        Ok(())
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        // The copies must be done before their pages are released; where that cannot be known
        // the pages stay registered (until the process ends).
        if self.stream.synchronize().is_ok() {
            for &p in &self.pages {
                // SAFETY: `p` was registered by `add`, and no copy from it is pending.
                let _ = unsafe { sys::cuMemHostUnregister(p) };
            }
        }
    }
}
