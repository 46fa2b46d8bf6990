//! The indexed text: forward reference + its reverse complement, 2 bits per base, 32 bases
//! per u64 word with the first base in the high bits, so 32-base windows compare as integers.

use std::cmp::Ordering;

#[derive(Clone)]
pub struct PackedText {
    words: Vec<u64>,
    len: u64,
}

impl PackedText {
    /// Builds forward + reverse complement from the forward bases (codes 0..=3), the words
    /// in parallel: a forward word is 8 packed bytes, a reverse-complement word the complement
    /// of a forward window with its bases reversed; the word holding the strands' junction and
    /// the last word base by base.
    pub fn with_reverse_complement(forward: &ForwardBases) -> PackedText {
        use rayon::prelude::*;
        let l_pac = forward.len();
        let len = 2 * l_pac;
        let bytes = forward.bytes();
        // Forward bases 32 w .. 32 w + 32, zeros past the end.
        let forward_word = |w: usize| -> u64 {
            let s = w * 8;
            let mut b = [0u8; 8];
            if s < bytes.len() {
                let e = (s + 8).min(bytes.len());
                b[..e - s].copy_from_slice(&bytes[s..e]);
            }
            u64::from_be_bytes(b)
        };
        // One spare word so that a window may always read the word after its start.
        let mut words = vec![0u64; (len as usize).div_ceil(32) + 1];
        words.par_iter_mut().enumerate().with_min_len(1 << 12).for_each(|(w, word)| {
            let first = w as u64 * 32;
            if first + 32 <= l_pac {
                *word = forward_word(w);
            } else if first >= l_pac && first + 32 <= len {
                // Bases first.. are the complements of forward bases q + 31 down to q.
                let q = len - 32 - first;
                let (qw, shift) = ((q / 32) as usize, 2 * (q % 32) as u32);
                let window = forward_word(qw) << shift | (forward_word(qw + 1) >> 1) >> (63 - shift);
                *word = !reverse_bases(window);
            } else {
                for i in first..(first + 32).min(len) {
                    let c = if i < l_pac { forward.get(i) } else { 3 - forward.get(len - 1 - i) };
                    *word |= (c as u64) << (62 - 2 * (i & 31));
                }
            }
        });
        PackedText { words, len }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// The packed words: 32 bases each, first base in the high bits, zeros after the last
    /// base and one spare word (a window may always read the word after its start).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn base(&self, i: u64) -> u8 {
        (self.words[(i >> 5) as usize] >> (62 - 2 * (i & 31)) & 3) as u8
    }

    /// The 32 bases starting at `i` (zeros past the end), first base in the high bits.
    #[inline]
    pub fn window(&self, i: u64) -> u64 {
        let w = (i >> 5) as usize;
        let shift = 2 * (i & 31);
        if shift == 0 {
            self.words[w]
        } else {
            self.words[w] << shift | self.words[w + 1] >> (64 - shift)
        }
    }

    /// The codes of the `k` bases (k <= 31) starting at each position in turn, zeros past the
    /// end: a rolling code, one base read per position (cheaper than a window per position).
    pub fn kmer_codes(&self, k: u32) -> impl Iterator<Item = u64> + '_ {
        let mask = (1u64 << (2 * k)) - 1;
        let mut code = if self.len == 0 { 0 } else { self.window(0) >> (64 - 2 * k) };
        (0..self.len).map(move |i| {
            let here = code;
            code = (code << 2 | self.base(i + k as u64) as u64) & mask;
            here
        })
    }

    /// Base counts of the whole text (the words in parallel; the zeros after the last base
    /// would count as A's, so A is what the others leave).
    pub fn base_counts(&self) -> [u64; 4] {
        use rayon::prelude::*;
        const LOW: u64 = 0x5555_5555_5555_5555;
        let [c1, c2, c3] = self
            .words
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&w| {
                let (hi, lo) = (w >> 1 & LOW, w & LOW);
                [
                    (!hi & lo & LOW).count_ones() as u64,
                    (hi & !lo & LOW).count_ones() as u64,
                    (hi & lo).count_ones() as u64,
                ]
            })
            .reduce(|| [0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
        [self.len - c1 - c2 - c3, c1, c2, c3]
    }
}

/// The 32 bases of a word in reverse order.
#[inline]
fn reverse_bases(x: u64) -> u64 {
    let x = x.swap_bytes();
    let x = (x >> 4) & 0x0F0F_0F0F_0F0F_0F0F | (x & 0x0F0F_0F0F_0F0F_0F0F) << 4;
    (x >> 2) & 0x3333_3333_3333_3333 | (x & 0x3333_3333_3333_3333) << 2
}

/// The forward bases as bwa packs them in `.pac`: 4 per byte, first base in the high bits.
#[derive(Default)]
pub struct ForwardBases {
    bytes: Vec<u8>,
    len: u64,
}

impl ForwardBases {
    pub fn push(&mut self, c: u8) {
        if self.len.is_multiple_of(4) {
            self.bytes.push(0);
        }
        let last = self.bytes.len() - 1;
        self.bytes[last] |= c << ((3 - (self.len & 3)) * 2);
        self.len += 1;
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Room for `bases` more bases without reallocating.
    pub fn reserve(&mut self, bases: u64) {
        self.bytes.reserve(((self.len + bases).div_ceil(4) as usize).saturating_sub(self.bytes.len()));
    }

    /// Adds `extra` bases of code 0 and returns the packed bytes from the one holding the
    /// first of them on (it may hold earlier bases too: fill the new bases by OR).
    pub fn grow(&mut self, extra: u64) -> &mut [u8] {
        let first = (self.len / 4) as usize;
        self.len += extra;
        self.bytes.resize(self.len.div_ceil(4) as usize, 0);
        &mut self.bytes[first..]
    }

    /// The packed bytes (4 bases each, the first in the high bits).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    #[inline]
    pub fn get(&self, i: u64) -> u8 {
        self.bytes[(i >> 2) as usize] >> ((3 - (i & 3)) * 2) & 3
    }

    /// Writes the `.pac` file (see [`pac_file_bytes`](Self::pac_file_bytes)) without a copy.
    pub fn write_pac(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        w.write_all(&self.bytes)?;
        if self.len.is_multiple_of(4) {
            w.write_all(&[0])?;
        }
        w.write_all(&[(self.len % 4) as u8])
    }

    /// The `.pac` file contents: the packed bytes, a 0 byte if the length is a multiple of 4,
    /// then a byte with `len % 4`.
    pub fn pac_file_bytes(&self) -> Vec<u8> {
        let mut out = self.bytes.clone();
        if self.len.is_multiple_of(4) {
            out.push(0);
        }
        out.push((self.len % 4) as u8);
        out
    }
}

/// Compares the suffixes starting at `a` and `b` (`a != b`); the end of the text sorts first.
/// Costs their common prefix: the sort uses [`CoverRanks::compare`]; this is its oracle.
pub fn compare_suffixes(text: &PackedText, a: u64, b: u64) -> Ordering {
    compare_suffixes_counting(text, a, b).0
}

/// [`compare_suffixes`] and the number of 32-base words it read (for profiling).
pub fn compare_suffixes_counting(text: &PackedText, mut a: u64, mut b: u64) -> (Ordering, u64) {
    let n = text.len();
    let mut words = 0;
    loop {
        words += 1;
        let (ra, rb) = (n - a, n - b);
        let m = ra.min(rb).min(32);
        if m > 0 {
            let keep = !0u64 << (64 - 2 * m);
            let (wa, wb) = (text.window(a) & keep, text.window(b) & keep);
            if wa != wb {
                return (wa.cmp(&wb), words);
            }
        }
        if m < 32 {
            return (ra.cmp(&rb), words);
        }
        a += 32;
        b += 32;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The text (both strands) of a sequence of base codes, for the sorting tests.
    pub(crate) fn text_of(s: &[u8]) -> PackedText {
        let mut f = ForwardBases::default();
        for &c in s {
            f.push(c);
        }
        PackedText::with_reverse_complement(&f)
    }

    #[test]
    fn packing_and_counts_match_base_by_base() {
        for len in [1usize, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 96, 100, 127, 5000, 5003] {
            let seq: Vec<u8> = (0..len).map(|i| ((i * 7 + i / 3) % 4) as u8).collect();
            let t = text_of(&seq);
            assert_eq!(t.len(), 2 * len as u64);
            let mut counts = [0u64; 4];
            for i in 0..len {
                assert_eq!(t.base(i as u64), seq[i]);
                assert_eq!(t.base((2 * len - 1 - i) as u64), 3 - seq[i]);
                counts[seq[i] as usize] += 1;
                counts[3 - seq[i] as usize] += 1;
            }
            assert_eq!(t.base_counts(), counts, "len {len}");
            assert!(
                t.words()[(2 * len) / 32 + 1..].iter().all(|&w| w == 0)
                    && t.words()[(2 * len) / 32] << (2 * (2 * len % 32)) == 0
                    || 2 * len % 32 == 0
            );
        }
    }
}
