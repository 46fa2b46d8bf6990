//! The indexed text: forward reference + its reverse complement, 2 bits per base, 32 bases
//! per u64 word with the first base in the high bits, so 32-base windows compare as integers.

#[derive(Clone)]
pub struct PackedText {
    words: Vec<u64>,
    len: u64,
}

impl PackedText {
    /// Builds forward + reverse complement from the forward bases (codes 0..=3).
    pub fn with_reverse_complement(forward: &ForwardBases) -> PackedText {
        let l_pac = forward.len();
        let len = 2 * l_pac;
        // One spare word so that a window may always read the word after its start.
        let mut words = vec![0u64; (len as usize).div_ceil(32) + 1];
        for i in 0..l_pac {
            set(&mut words, i, forward.get(i));
            set(&mut words, len - 1 - i, 3 - forward.get(i));
        }
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

    /// Base counts of the whole text.
    pub fn base_counts(&self) -> [u64; 4] {
        let mut counts = [0u64; 4];
        for i in 0..self.len {
            counts[self.base(i) as usize] += 1;
        }
        counts
    }
}

#[inline]
fn set(words: &mut [u64], i: u64, c: u8) {
    words[(i >> 5) as usize] |= (c as u64) << (62 - 2 * (i & 31));
}

/// The forward bases as bwa packs them in `.pac`: 4 per byte, first base in the high bits.
#[derive(Default)]
pub struct ForwardBases {
    bytes: Vec<u8>,
    len: u64,
}

impl ForwardBases {
    pub fn push(&mut self, c: u8) {
        if self.len % 4 == 0 {
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

    #[inline]
    pub fn get(&self, i: u64) -> u8 {
        self.bytes[(i >> 2) as usize] >> ((3 - (i & 3)) * 2) & 3
    }

    /// The `.pac` file contents: the packed bytes, a 0 byte if the length is a multiple of 4,
    /// then a byte with `len % 4`.
    pub fn pac_file_bytes(&self) -> Vec<u8> {
        let mut out = self.bytes.clone();
        if self.len % 4 == 0 {
            out.push(0);
        }
        out.push((self.len % 4) as u8);
        out
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
}
