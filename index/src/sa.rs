//! The sampled suffix array of `.sa`: every 32nd row's text position, memory-mapped.
//!
//! File: `primary`, L2[1..=4], the interval, `seq_len` (u64 each), then the samples of rows
//! 32, 64, ... (row 0, the `$` row, is not stored: bwa treats it as -1).

use std::path::Path;

use memmap2::Mmap;

use crate::bwt::Bwt;
use crate::error::{IndexError, Result};

const HEADER_BYTES: usize = 7 * 8;

pub struct SuffixArray {
    map: Mmap,
    interval: u64,
    seq_len: u64,
}

/// Index of the first sample of `body` (the samples after the header, u64 each) that is not
/// a text position below `seq_len`. One parallel pass, memory-bound (samse and sampe read
/// these pages anyway).
pub fn first_sample_beyond(body: &[u8], seq_len: u64) -> Option<usize> {
    use rayon::prelude::*;
    body.par_chunks_exact(8)
        .with_min_len(1 << 14)
        .position_first(|b| u64::from_le_bytes(b.try_into().unwrap()) >= seq_len)
}

/// Number of stored samples for a text of `seq_len` and a sampling `interval`.
pub fn stored_samples(seq_len: u64, interval: u64) -> u64 {
    (seq_len + interval) / interval - 1
}

impl SuffixArray {
    /// Loads `.sa` and checks that it was built from `bwt`.
    pub fn load(path: &Path, bwt: &Bwt) -> Result<SuffixArray> {
        let file = std::fs::File::open(path).map_err(|e| IndexError::index_io(path, e))?;
        // SAFETY: read-only input, never written through the map.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| IndexError::index_io(path, e))?;
        if map.len() < HEADER_BYTES {
            return Err(IndexError::truncated(path, format!("{} bytes, shorter than the 56-byte header", map.len())));
        }
        let h: Vec<u64> =
            map[..HEADER_BYTES].chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        let l2 = bwt.l2();
        if h[0] != bwt.primary() || h[1..5] != l2[1..5] || h[6] != bwt.seq_len() {
            return Err(IndexError::mismatch(
                path,
                "its header differs from the .bwt (primary, base counts or length)",
            ));
        }
        let interval = h[5];
        if interval == 0 || !interval.is_power_of_two() {
            return Err(IndexError::corrupt(path, format!("sampling interval {interval} is not a power of 2")));
        }
        let expected = stored_samples(bwt.seq_len(), interval) * 8;
        let body = (map.len() - HEADER_BYTES) as u64;
        if body < expected {
            return Err(IndexError::truncated(path, format!("{body} bytes of samples, expected {expected}")));
        }
        if body != expected {
            return Err(IndexError::corrupt(path, format!("{body} bytes of samples, expected {expected}")));
        }
        if let Some(i) = first_sample_beyond(&map[HEADER_BYTES..], bwt.seq_len()) {
            return Err(IndexError::corrupt(
                path,
                format!(
                    "sample {} (row {}) lies beyond the text of length {}",
                    i + 1,
                    (i as u64 + 1) * interval,
                    bwt.seq_len()
                ),
            ));
        }
        Ok(SuffixArray { map, interval, seq_len: bwt.seq_len() })
    }

    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Sample of row `row` (a multiple of the interval); row 0 is -1 as in bwa.
    fn sample(&self, row: u64) -> u64 {
        let i = row / self.interval;
        if i == 0 {
            return u64::MAX;
        }
        let b = HEADER_BYTES + 8 * (i as usize - 1);
        u64::from_le_bytes(self.map[b..b + 8].try_into().unwrap())
    }

    /// Text position of the suffix in row `k` (bwa's bwt_sa): walk left to a sampled row.
    /// Below the text length for every row but 0: the checks at load cannot see every
    /// corruption (two samples swapped, bases swapped within a checkpoint's block), and a
    /// position beyond the text would make its users index out of bounds.
    pub fn position(&self, bwt: &Bwt, mut k: u64) -> u64 {
        let mut steps = 0u64;
        // The interval is a power of two (checked at load): a mask, not a division per step.
        let mask = self.interval - 1;
        while k & mask != 0 {
            steps += 1;
            k = bwt.invpsi(k);
            // A valid BWT reaches a sampled row (at the latest row 0) within the text's length.
            if steps > self.seq_len {
                return self.seq_len - 1;
            }
        }
        let pos = steps.wrapping_add(self.sample(k));
        // Row 0 itself (the `$`) stays -1, as in bwa.
        if pos == u64::MAX {
            pos
        } else {
            pos.min(self.seq_len - 1)
        }
    }
}
