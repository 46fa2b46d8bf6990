//! The interval table on the GPU (`cuda/interval_table.cu`, the array of bcuda-index's
//! `IntervalTable`): built at start-up from the BWT already there, level by level, and read
//! by the inexact search's first steps (`interval_depth`).

use std::sync::Arc;

use anyhow::{Context, Result};
use bcuda_index::IntervalTable;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::nvrtc::compile_cached;

pub const INTERVAL_TABLE_CU: &str = include_str!("../../cuda/interval_table.cu");

/// The most of the free GPU memory the table may take: the passes' stacks need the rest.
const FREE_SHARE: f64 = 0.25;

/// The table of a GPU: `depth` 0 is none (one unused pair).
pub struct GpuIntervals {
    pub table: CudaSlice<u64>,
    pub depth: i32,
}

/// The BWT on the GPU, as the kernels take it.
pub struct GpuBwt<'a> {
    pub words: &'a CudaSlice<u32>,
    pub primary: u64,
    pub seq_len: u64,
    pub l2: &'a CudaSlice<u64>,
}

/// Bytes of a table of `depth` levels.
pub fn table_bytes(depth: u32) -> u64 {
    IntervalTable::len_for(depth) as u64 * 16
}

/// The deepest table, up to `wanted`, that takes at most [`FREE_SHARE`] of `free` bytes.
pub fn fitting_depth(wanted: u32, free: u64) -> u32 {
    (0..=wanted).rev().find(|&d| d == 0 || table_bytes(d) as f64 <= free as f64 * FREE_SHARE).unwrap_or(0)
}

/// Builds the table of up to `wanted` levels (fewer where the GPU's memory is short).
pub fn build(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    arch: &'static str,
    bwt: &GpuBwt,
    wanted: u32,
) -> Result<GpuIntervals> {
    let (free, _) = ctx.mem_get_info()?;
    let depth = fitting_depth(wanted, free as u64);
    // SAFETY: every pair of levels 1..=depth is written below before a kernel reads it.
    let mut table = unsafe { stream.alloc::<u64>(2 * IntervalTable::len_for(depth).max(1)) }
        .context("allocating the interval table")?;
    if depth > 0 {
        let f = compile_cached(INTERVAL_TABLE_CU, &[], arch)?.load(ctx)?.load_function("build_interval_level")?;
        for d in 0..depth as i32 {
            let strings = 1u64 << (2 * d);
            let cfg = LaunchConfig {
                grid_dim: (strings.div_ceil(256) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = stream.launch_builder(&f);
            launch.arg(bwt.words).arg(&bwt.primary).arg(&bwt.seq_len).arg(bwt.l2).arg(&mut table).arg(&d);
            // SAFETY: argument order and types match build_interval_level's signature.
            unsafe { launch.launch(cfg) }.context("launching build_interval_level")?;
        }
    }
    Ok(GpuIntervals { table, depth: depth as i32 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shrinks_to_a_quarter_of_free_memory() {
        assert_eq!(table_bytes(12), 16 * ((1u64 << 26) - 4) / 3);
        assert_eq!(fitting_depth(12, 80 << 30), 12);
        assert_eq!(fitting_depth(14, 8 << 30), 13, "5.7 GB is over a quarter of 8 GiB, 1.4 GB is not");
        assert_eq!(fitting_depth(12, 0), 0);
    }
}
