//! The BWT with interleaved occurrence counts, as BWA 0.7 stores it in `.bwt`, memory-mapped.
//!
//! File: `primary` (u64), the cumulative counts L2[1..=4] (u64 each), then u32 words. For every
//! 128 BWT positions there is one block: the 4 occurrence counts before the block (4 x u64 =
//! 8 words) followed by the 128 bases (8 words, 16 bases per word, first base in the high
//! bits); one last set of counts closes the array. The `$` is not stored: row `primary` holds it.

use std::path::Path;

use memmap2::Mmap;

use crate::error::{IndexError, Result};

/// Positions per occurrence block (bwa's OCC_INTERVAL); a block is 16 u32 words.
pub const OCC_INTERVAL: u64 = 128;
const BLOCK_WORDS: usize = 16;
const HEADER_BYTES: usize = 5 * 8;

pub struct Bwt {
    map: Mmap,
    primary: u64,
    l2: [u64; 5],
    seq_len: u64,
}

/// The number of u32 words of the interleaved array for a BWT of `seq_len` bases.
pub fn interleaved_words(seq_len: u64) -> u64 {
    let n_occ = seq_len.div_ceil(OCC_INTERVAL) + 1;
    seq_len.div_ceil(16) + n_occ * 8
}

impl Bwt {
    pub fn load(path: &Path) -> Result<Bwt> {
        let file = std::fs::File::open(path).map_err(|e| IndexError::io(path, e))?;
        // SAFETY: the index files are read-only inputs; we never write through the map.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| IndexError::io(path, e))?;
        if map.len() < HEADER_BYTES {
            return Err(IndexError::truncated(path, format!("{} bytes, shorter than the 40-byte header", map.len())));
        }
        let header: Vec<u64> = map[..HEADER_BYTES].chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        let primary = header[0];
        let l2 = [0, header[1], header[2], header[3], header[4]];
        let seq_len = l2[4];
        if l2.windows(2).any(|w| w[0] > w[1]) {
            return Err(IndexError::corrupt(path, "cumulative base counts are not increasing"));
        }
        if seq_len == 0 || primary > seq_len {
            return Err(IndexError::corrupt(path, format!("primary {primary} outside a BWT of length {seq_len}")));
        }
        let body = (map.len() - HEADER_BYTES) as u64;
        let expected = interleaved_words(seq_len) * 4;
        if body < expected {
            return Err(IndexError::truncated(path, format!("{body} bytes of BWT data, expected {expected}")));
        }
        if body != expected {
            return Err(IndexError::corrupt(path, format!("{body} bytes of BWT data, expected {expected}")));
        }
        Ok(Bwt { map, primary, l2, seq_len })
    }

    /// Length of the text (forward + reverse complement), without the `$`.
    pub fn seq_len(&self) -> u64 {
        self.seq_len
    }

    /// Row of the BWT that holds the `$`.
    pub fn primary(&self) -> u64 {
        self.primary
    }

    /// BWA's L2: `l2[c]` = number of bases smaller than `c`; `l2[4]` = `seq_len`.
    pub fn l2(&self) -> [u64; 5] {
        self.l2
    }

    /// The interleaved occurrence/BWT array exactly as in the file (for the GPU).
    pub fn words(&self) -> &[u32] {
        bytemuck::cast_slice(&self.map[HEADER_BYTES..])
    }

    #[inline]
    fn word(&self, i: usize) -> u32 {
        let b = HEADER_BYTES + 4 * i;
        u32::from_le_bytes(self.map[b..b + 4].try_into().unwrap())
    }

    #[inline]
    fn block_count(&self, block: usize, c: u8) -> u64 {
        self.word(block + 2 * c as usize) as u64 | (self.word(block + 2 * c as usize + 1) as u64) << 32
    }

    /// Base at position `x` of the `$`-removed BWT.
    #[inline]
    pub fn bwt_char(&self, x: u64) -> u8 {
        let w = self.word((x >> 7) as usize * BLOCK_WORDS + 8 + ((x & 127) >> 4) as usize);
        (w >> ((15 - (x & 15)) * 2) & 3) as u8
    }

    /// Occurrences of `c` in rows `0..=k` of the BWT (`$` not counted); `k == u64::MAX` gives 0.
    #[inline]
    pub fn occ(&self, k: u64, c: u8) -> u64 {
        if k == u64::MAX {
            return 0;
        }
        let x = k - (k >= self.primary) as u64;
        let block = (x >> 7) as usize * BLOCK_WORDS;
        self.block_count(block, c) + self.count_in_block(block, (x & 127) as usize + 1, c)
    }

    /// `occ` for all four bases.
    #[inline]
    pub fn occ4(&self, k: u64) -> [u64; 4] {
        if k == u64::MAX {
            return [0; 4];
        }
        let x = k - (k >= self.primary) as u64;
        let block = (x >> 7) as usize * BLOCK_WORDS;
        let n = (x & 127) as usize + 1;
        std::array::from_fn(|c| self.block_count(block, c as u8) + self.count_in_block(block, n, c as u8))
    }

    /// `(occ(k, c), occ(l, c))`: bwa's bwt_2occ.
    #[inline]
    pub fn occ_pair(&self, k: u64, l: u64, c: u8) -> (u64, u64) {
        (self.occ(k, c), self.occ(l, c))
    }

    /// `(occ4(k), occ4(l))`: bwa's bwt_2occ4.
    #[inline]
    pub fn occ4_pair(&self, k: u64, l: u64) -> ([u64; 4], [u64; 4]) {
        (self.occ4(k), self.occ4(l))
    }

    /// Count of `c` among the first `n` (1..=128) bases of the block starting at word `block`.
    #[inline]
    fn count_in_block(&self, block: usize, n: usize, c: u8) -> u64 {
        let pattern = 0x5555_5555_5555_5555u64 * c as u64;
        let mut total = 0u64;
        let mut left = n;
        let mut w = block + 8;
        while left > 0 {
            let chunk = (self.word(w) as u64) << 32 | self.word(w + 1) as u64;
            let y = chunk ^ pattern;
            let mut hits = !(y | y >> 1) & 0x5555_5555_5555_5555;
            if left < 32 {
                hits &= !0u64 << (64 - 2 * left);
            }
            total += hits.count_ones() as u64;
            left = left.saturating_sub(32);
            w += 2;
        }
        total
    }

    /// Row of the suffix one position to the left (bwa's bwt_invPsi); the `$` row maps to 0.
    #[inline]
    pub fn invpsi(&self, k: u64) -> u64 {
        if k == self.primary {
            return 0;
        }
        let c = self.bwt_char(k - (k > self.primary) as u64);
        self.l2[c as usize] + self.occ(k, c)
    }

    /// Backward search of a whole pattern (codes 0..=3; any other code fails): the SA interval
    /// `[k, l]` of its occurrences, or `None`. bwa's bwt_match_exact.
    pub fn match_exact(&self, pattern: &[u8]) -> Option<(u64, u64)> {
        let (mut k, mut l) = (0u64, self.seq_len);
        for &c in pattern.iter().rev() {
            if c > 3 {
                return None;
            }
            let (ok, ol) = self.occ_pair(k.wrapping_sub(1), l, c);
            k = self.l2[c as usize] + ok + 1;
            l = self.l2[c as usize] + ol;
            if k > l {
                return None;
            }
        }
        Some((k, l))
    }
}
