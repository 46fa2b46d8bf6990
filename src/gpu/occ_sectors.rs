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

/// The pair sectors' header and superblocks' bases (`PAIR_HEADER`, 16 u64 a superblock), and
/// their words per sector: 32 bytes for each first base.
const PAIR_HEADER_WORDS: u64 = 2 * (32 + 16 * 4);
const PAIR_SECTOR_WORDS: u64 = 32;

/// Whether the sectors of a BWT of `seq_len` positions (with the pairs' counts: `pairs`) fit
/// in `free` bytes of GPU memory.
pub fn fits(seq_len: u64, pairs: bool, free: u64) -> bool {
    (sector_words(seq_len, pairs) * 4) as f64 <= free as f64 * FREE_SHARE
}

/// Why the sectors of a BWT of `seq_len` positions (with `pairs`) do not fit in `free` bytes
/// of GPU memory, if they do not.
pub fn unfit_for(seq_len: u64, pairs: bool, free: u64) -> Option<String> {
    (!fits(seq_len, pairs, free)).then(|| {
        format!(
            "{}: the occurrence sectors ({} MiB) would take over a quarter of the GPU's free memory \
             ({} MiB), which the passes' stacks need",
            if pairs { "occ_pairs" } else { "occ_sectors" },
            (sector_words(seq_len, pairs) * 4) >> 20,
            free >> 20
        )
    })
}

/// u32 words of the sectors of a BWT of `seq_len` positions, and of the pairs' after them.
pub fn sector_words(seq_len: u64, pairs: bool) -> u64 {
    let sectors = seq_len.div_ceil(SECTOR_ROWS);
    let pair_words = if pairs { PAIR_HEADER_WORDS + sectors * PAIR_SECTOR_WORDS } else { 0 };
    HEADER_WORDS + sectors * SECTOR_WORDS + pair_words
}

/// Builds the sectors of `bwt` (a genome of fewer than 2^34 rows: four superblocks), and with
/// `pairs` the pairs' counts after them.
pub fn build(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    arch: &'static str,
    bwt: &GpuBwt,
    pairs: bool,
) -> Result<CudaSlice<u32>> {
    let words = sector_words(bwt.seq_len, pairs);
    // SAFETY: the kernels write the headers and every sector before the search reads them.
    let mut sectors = unsafe { stream.alloc::<u32>(words as usize) }.context("allocating the occurrence sectors")?;
    let module = compile_cached(OCC_SECTORS_CU, &[], arch)?.load(ctx)?;
    let per_sector = |threads: u64| LaunchConfig {
        grid_dim: (threads.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let n_sectors = bwt.seq_len.div_ceil(SECTOR_ROWS);
    let f = module.load_function("build_occ_sectors")?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(bwt.words).arg(&bwt.seq_len).arg(&mut sectors);
    // SAFETY: argument order and types match build_occ_sectors' signature.
    unsafe { launch.launch(per_sector(n_sectors.max(16))) }.context("launching build_occ_sectors")?;
    if pairs {
        let f = module.load_function("build_pair_sectors")?;
        let mut launch = stream.launch_builder(&f);
        launch.arg(&mut sectors).arg(&bwt.seq_len).arg(&bwt.primary).arg(bwt.l2);
        // SAFETY: argument order and types match build_pair_sectors' signature; it reads the
        // sectors the launch before wrote, on the same stream.
        unsafe { launch.launch(per_sector(n_sectors.max(64))) }.context("launching build_pair_sectors")?;
    }
    Ok(sectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sectors_take_as_much_memory_as_bwas_array() {
        let seq_len = 6_200_000_000u64;
        let bwa_bytes = seq_len.div_ceil(128) * 64;
        let bytes = sector_words(seq_len, false) * 4;
        assert_eq!(bytes, 128 + seq_len.div_ceil(64) * 32);
        assert_eq!(bytes, bwa_bytes + 128, "half a byte a row in both, and the superblocks");
        assert!(fits(seq_len, false, 75 << 30) && !fits(seq_len, false, 8 << 30), "an H100's memory, not 8 GiB");
    }

    #[test]
    fn the_pairs_take_four_times_the_sectors() {
        let seq_len = 6_200_000_000u64;
        let pair_bytes = (sector_words(seq_len, true) - sector_words(seq_len, false)) * 4;
        assert_eq!(
            pair_bytes,
            8 * (32 + 16 * 4) + seq_len.div_ceil(64) * 128,
            "the header, then 4 x 32 bytes a sector"
        );
        assert!(fits(seq_len, true, 75 << 30) && !fits(seq_len, true, 40 << 30), "an H100's memory, not 40 GiB");
    }

    #[test]
    fn sectors_that_do_not_fit_say_how_large_they_are() {
        let seq_len = 6_200_000_000u64;
        assert_eq!(unfit_for(seq_len, false, 75 << 30), None);
        let why = unfit_for(seq_len, false, 8 << 30).unwrap();
        assert!(why.starts_with("occ_sectors: the occurrence sectors (2956 MiB)"), "{why}");
        assert!(why.contains("free memory (8192 MiB)"), "{why}");
    }
}
