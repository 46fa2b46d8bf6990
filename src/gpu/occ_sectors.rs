//! The occurrence sectors on the GPU (`cuda/occ_sectors.cu`; the layout is described in
//! `cuda/bwt.cuh`): a second copy of the BWT, built at start-up from bwa's array already
//! there, that the inexact search counts from with `occ_sectors`.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::interval_table::GpuBwt;
use super::nvrtc::compile_cached;

pub const OCC_SECTORS_CU: &str = include_str!("../../cuda/occ_sectors.cu");

/// Rows a sector holds, and its bytes (`SECTOR_ROWS` in cuda/bwt.cuh).
const SECTOR_ROWS: u64 = 64;
const SECTOR_WORDS: u64 = 8;
/// The superblocks' bases before the first sector: 4 x 4 u64 (`SECTOR_SUPERS`).
const HEADER_WORDS: u64 = 4 * 4 * 2;

/// The most of the free GPU memory the sectors may take: the passes' stacks need the rest, and
/// bwa's array, which the search can count from instead, is already there.
const FREE_SHARE: f64 = 0.25;

/// Whether the sectors of a BWT of `seq_len` positions fit in `free` bytes of GPU memory.
pub fn fits(seq_len: u64, free: u64) -> bool {
    (sector_words(seq_len) * 4) as f64 <= free as f64 * FREE_SHARE
}

/// Why the sectors of a BWT of `seq_len` positions do not fit in `free` bytes of GPU memory,
/// if they do not.
pub fn unfit_for(seq_len: u64, free: u64) -> Option<String> {
    (!fits(seq_len, free)).then(|| {
        format!(
            "occ_sectors: the occurrence sectors ({} MiB) would take over a quarter of the GPU's free memory \
             ({} MiB), which the passes' stacks need",
            (sector_words(seq_len) * 4) >> 20,
            free >> 20
        )
    })
}

/// u32 words of the sectors of a BWT of `seq_len` positions.
pub fn sector_words(seq_len: u64) -> u64 {
    HEADER_WORDS + seq_len.div_ceil(SECTOR_ROWS) * SECTOR_WORDS
}

/// Builds the sectors of `bwt` (a genome of fewer than 2^34 rows: four superblocks).
pub fn build(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    arch: &'static str,
    bwt: &GpuBwt,
) -> Result<CudaSlice<u32>> {
    let words = sector_words(bwt.seq_len);
    // SAFETY: the kernel writes the header and every sector before the search reads them.
    let mut sectors = unsafe { stream.alloc::<u32>(words as usize) }.context("allocating the occurrence sectors")?;
    let f = compile_cached(OCC_SECTORS_CU, &[], arch)?.load(ctx)?.load_function("build_occ_sectors")?;
    let threads = bwt.seq_len.div_ceil(SECTOR_ROWS).max(16);
    let cfg =
        LaunchConfig { grid_dim: (threads.div_ceil(256) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.launch_builder(&f);
    launch.arg(bwt.words).arg(&bwt.seq_len).arg(&mut sectors);
    // SAFETY: argument order and types match build_occ_sectors' signature.
    unsafe { launch.launch(cfg) }.context("launching build_occ_sectors")?;
    Ok(sectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sectors_take_as_much_memory_as_bwas_array() {
        let seq_len = 6_200_000_000u64;
        let bwa_bytes = seq_len.div_ceil(128) * 64;
        let bytes = sector_words(seq_len) * 4;
        assert_eq!(bytes, 128 + seq_len.div_ceil(64) * 32);
        assert_eq!(bytes, bwa_bytes + 128, "half a byte a row in both, and the superblocks");
        assert!(fits(seq_len, 75 << 30) && !fits(seq_len, 8 << 30), "an H100's memory, not 8 GiB");
    }

    #[test]
    fn sectors_that_do_not_fit_say_how_large_they_are() {
        let seq_len = 6_200_000_000u64;
        assert_eq!(unfit_for(seq_len, 75 << 30), None);
        let why = unfit_for(seq_len, 8 << 30).unwrap();
        assert!(why.starts_with("occ_sectors: the occurrence sectors (2956 MiB)"), "{why}");
        assert!(why.contains("free memory (8192 MiB)"), "{why}");
    }
}
