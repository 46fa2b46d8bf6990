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

const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// Mask keeping the first `bases` (0..=32) 2-bit fields of a 64-bit chunk.
#[inline]
fn keep_mask(bases: usize) -> u64 {
    if bases >= 32 {
        !0
    } else if bases == 0 {
        0
    } else {
        !0u64 << (64 - 2 * bases)
    }
}

/// The 64-bit chunk (32 bases, first base in the high bits) `j` of a block's bases.
#[inline]
fn chunk(words: &[u32], block: usize, j: usize) -> u64 {
    (words[block + 8 + 2 * j] as u64) << 32 | words[block + 9 + 2 * j] as u64
}

/// Occurrences of `c` among bases `from..to` of a block.
#[inline]
fn count_base(words: &[u32], block: usize, from: usize, to: usize, c: u8) -> u64 {
    let pattern = LOW_BITS * c as u64;
    let mut total = 0;
    let mut pos = from;
    while pos < to {
        let j = pos / 32;
        let end = to.min(32 * (j + 1));
        // Fields equal to `c` become 00 after the xor.
        let y = chunk(words, block, j) ^ pattern;
        let mask = keep_mask(end - 32 * j) & !keep_mask(pos - 32 * j) & LOW_BITS;
        total += (!(y | y >> 1) & mask).count_ones() as u64;
        pos = end;
    }
    total
}

/// Adds the counts of each base among bases `from..to` of a block to `cnt`.
#[inline]
fn add_counts4(words: &[u32], block: usize, from: usize, to: usize, cnt: &mut [u64; 4]) {
    let mut pos = from;
    while pos < to {
        let j = pos / 32;
        let chunk = chunk(words, block, j);
        let end = to.min(32 * (j + 1));
        // Fields [pos - 32j, end - 32j) of this chunk.
        let mask = keep_mask(end - 32 * j) & !keep_mask(pos - 32 * j) & LOW_BITS;
        let hi = chunk >> 1;
        cnt[0] += (!hi & !chunk & mask).count_ones() as u64;
        cnt[1] += (!hi & chunk & mask).count_ones() as u64;
        cnt[2] += (hi & !chunk & mask).count_ones() as u64;
        cnt[3] += (hi & chunk & mask).count_ones() as u64;
        pos = end;
    }
}

/// The number of u32 words of the interleaved array for a BWT of `seq_len` bases.
pub fn interleaved_words(seq_len: u64) -> u64 {
    let n_occ = seq_len.div_ceil(OCC_INTERVAL) + 1;
    seq_len.div_ceil(16) + n_occ * 8
}

impl Bwt {
    pub fn load(path: &Path) -> Result<Bwt> {
        let file = std::fs::File::open(path).map_err(|e| IndexError::index_io(path, e))?;
        // SAFETY: the index files are read-only inputs; we never write through the map.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| IndexError::index_io(path, e))?;
        if map.len() < HEADER_BYTES {
            return Err(IndexError::truncated(path, format!("{} bytes, shorter than the 40-byte header", map.len())));
        }
        let header: Vec<u64> =
            map[..HEADER_BYTES].chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        let primary = header[0];
        let l2 = [0, header[1], header[2], header[3], header[4]];
        let seq_len = l2[4];
        if l2.windows(2).any(|w| w[0] > w[1]) {
            return Err(IndexError::corrupt(path, "cumulative base counts are not increasing"));
        }
        // Row 0 is the suffix `$` alone, whose BWT character is a base: the `$` is never there.
        if seq_len == 0 || primary == 0 || primary > seq_len {
            return Err(IndexError::corrupt(path, format!("primary {primary} outside a BWT of length {seq_len}")));
        }
        let body = (map.len() - HEADER_BYTES) as u64;
        // At most 4 bases a byte: checked first, so that the size below cannot overflow.
        if seq_len / 4 > body {
            return Err(IndexError::truncated(path, format!("{body} bytes of BWT data cannot hold {seq_len} bases")));
        }
        let expected = interleaved_words(seq_len) * 4;
        if body < expected {
            return Err(IndexError::truncated(path, format!("{body} bytes of BWT data, expected {expected}")));
        }
        if body != expected {
            return Err(IndexError::corrupt(path, format!("{body} bytes of BWT data, expected {expected}")));
        }
        let bwt = Bwt { map, primary, l2, seq_len };
        // The base counts of the header must be those of the BWT, and every checkpoint those
        // of the bases before it: no occurrence count then exceeds its base's total, and
        // searches stay within the BWT whatever they look for.
        let counts = bwt.occ4(seq_len);
        if (0..4).any(|c| l2[c + 1] - l2[c] != counts[c]) {
            return Err(IndexError::corrupt(
                path,
                format!(
                    "base counts {:?} of the header are not those of the BWT {counts:?}",
                    [l2[1], l2[2] - l2[1], l2[3] - l2[2], l2[4] - l2[3]]
                ),
            ));
        }
        if let Some(pos) = crate::bwt_check::first_bad_checkpoint(bwt.words(), seq_len) {
            return Err(IndexError::corrupt(
                path,
                format!("the occurrence counts at BWT position {pos} are not those of the bases before it"),
            ));
        }
        Ok(bwt)
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

    /// Maps the whole file into memory now (it is in the page cache after the first run), so
    /// that a later pass over it (the copy to the GPU) does not stop at every page; best effort:
    /// nothing happens where the kernel cannot (Linux before 5.14).
    pub fn populate(&self) {
        let _ = self.map.advise(memmap2::Advice::PopulateRead);
    }

    /// The interleaved occurrence/BWT array exactly as in the file (for the GPU).
    #[inline]
    pub fn words(&self) -> &[u32] {
        bytemuck::cast_slice(&self.map[HEADER_BYTES..])
    }

    #[inline]
    fn block_count(words: &[u32], block: usize, c: usize) -> u64 {
        words[block + 2 * c] as u64 | (words[block + 2 * c + 1] as u64) << 32
    }

    /// Base at position `x` of the `$`-removed BWT.
    #[inline]
    pub fn bwt_char(&self, x: u64) -> u8 {
        let w = self.words()[(x >> 7) as usize * BLOCK_WORDS + 8 + ((x & 127) >> 4) as usize];
        (w >> ((15 - (x & 15)) * 2) & 3) as u8
    }

    /// Position of row `k` in the `$`-removed BWT: its block's first word and the bases to
    /// count in the block (1..=128).
    #[inline]
    fn locate(&self, k: u64) -> (usize, usize) {
        let x = k - (k >= self.primary) as u64;
        ((x >> 7) as usize * BLOCK_WORDS, (x & 127) as usize + 1)
    }

    /// Occurrences of `c` in rows `0..=k` of the BWT (`$` not counted); `k == u64::MAX` gives 0.
    #[inline]
    pub fn occ(&self, k: u64, c: u8) -> u64 {
        if k == u64::MAX {
            return 0;
        }
        let words = self.words();
        let (block, n) = self.locate(k);
        Self::block_count(words, block, c as usize) + count_base(words, block, 0, n, c)
    }

    /// `occ` for all four bases.
    #[inline]
    pub fn occ4(&self, k: u64) -> [u64; 4] {
        if k == u64::MAX {
            return [0; 4];
        }
        let words = self.words();
        let (block, n) = self.locate(k);
        let mut cnt: [u64; 4] = std::array::from_fn(|c| Self::block_count(words, block, c));
        add_counts4(words, block, 0, n, &mut cnt);
        cnt
    }

    /// The base at row `l`, None at the primary row (its BWT character is `$`): for an interval
    /// of one row `[l, l]`, the only base whose count differs between rows `l - 1` and `l`, so
    /// row `l`'s block alone gives both rows' counts (the GPU kernels' `occ_singleton`).
    #[inline]
    pub fn row_base(&self, l: u64) -> Option<u8> {
        (l != self.primary).then(|| self.bwt_char(l - (l > self.primary) as u64))
    }

    /// `(occ(k, c), occ(l, c))` for `k <= l`: bwa's bwt_2occ, counting a shared block once.
    #[inline]
    pub fn occ_pair(&self, k: u64, l: u64, c: u8) -> (u64, u64) {
        if k == u64::MAX || l == u64::MAX {
            return (self.occ(k, c), self.occ(l, c));
        }
        if k + 1 == l {
            let ol = self.occ(l, c);
            return (ol - (self.row_base(l) == Some(c)) as u64, ol);
        }
        let (bk, nk) = self.locate(k);
        let (bl, nl) = self.locate(l);
        if bk != bl {
            return (self.occ(k, c), self.occ(l, c));
        }
        let words = self.words();
        let ok = Self::block_count(words, bk, c as usize) + count_base(words, bk, 0, nk, c);
        (ok, ok + count_base(words, bk, nk, nl, c))
    }

    /// `(occ4(k), occ4(l))` for `k <= l`: bwa's bwt_2occ4, counting a shared block once.
    #[inline]
    pub fn occ4_pair(&self, k: u64, l: u64) -> ([u64; 4], [u64; 4]) {
        if k == u64::MAX || l == u64::MAX {
            return (self.occ4(k), self.occ4(l));
        }
        if k + 1 == l {
            let cl = self.occ4(l);
            let mut ck = cl;
            if let Some(b) = self.row_base(l) {
                ck[b as usize] -= 1;
            }
            return (ck, cl);
        }
        let (bk, nk) = self.locate(k);
        let (bl, nl) = self.locate(l);
        if bk != bl {
            return (self.occ4(k), self.occ4(l));
        }
        let words = self.words();
        let mut ck: [u64; 4] = std::array::from_fn(|c| Self::block_count(words, bk, c));
        add_counts4(words, bk, 0, nk, &mut ck);
        let mut cl = ck;
        add_counts4(words, bk, nk, nl, &mut cl);
        (ck, cl)
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
