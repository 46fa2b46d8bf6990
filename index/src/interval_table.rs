//! The suffix-array intervals of every string of up to `depth` bases: the first steps of a
//! backward search as one lookup each, instead of two occurrence counts over the whole BWT.
//!
//! Level `d` holds the 4^d strings of `d` bases. A string is numbered by its bases in the
//! order the backward search adds them, the first added the most significant (two bits each),
//! so that the four one-base extensions `c·w` of a string `w` (numbered `4w + c`) lie side by
//! side: on the GPU, one 64-byte line. The levels follow each other from level 1; an interval
//! is `(k, l)` as bwa's backward search computes it, empty when `k > l`.

use crate::bwt::Bwt;

/// The intervals of levels 1 to `depth`.
pub struct IntervalTable {
    depth: u32,
    seq_len: u64,
    pairs: Vec<(u64, u64)>,
}

/// The deepest table built: level 15 alone is 16 GiB.
pub const MAX_DEPTH: u32 = 14;

/// The interval every extension of an empty interval gets (the search never extends one).
pub const EMPTY: (u64, u64) = (1, 0);

impl IntervalTable {
    /// Where level `d` (1 ..= depth) starts among the pairs: 4 + 16 + ... + 4^(d-1).
    pub fn level_start(d: u32) -> usize {
        ((1usize << (2 * d)) - 4) / 3
    }

    /// Pairs in levels 1 to `depth`.
    pub fn len_for(depth: u32) -> usize {
        Self::level_start(depth + 1)
    }

    /// Builds levels 1 to `depth` from `bwt`, each from the one before, as bwa's backward
    /// search extends an interval: `k' = L2[c] + occ(k - 1, c) + 1`, `l' = L2[c] + occ(l, c)`.
    pub fn build(bwt: &Bwt, depth: u32) -> IntervalTable {
        assert!(depth <= MAX_DEPTH, "interval tables go to depth {MAX_DEPTH}");
        let mut pairs = vec![EMPTY; Self::len_for(depth)];
        for d in 0..depth {
            let (parents, children) = pairs.split_at_mut(Self::level_start(d + 1));
            let children = &mut children[..1 << (2 * (d + 1))];
            for (w, kids) in children.chunks_exact_mut(4).enumerate() {
                let parent = if d == 0 { (0, bwt.seq_len()) } else { parents[Self::level_start(d) + w] };
                kids.copy_from_slice(&extensions(bwt, parent));
            }
        }
        IntervalTable { depth, seq_len: bwt.seq_len(), pairs }
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Every level's pairs, level 1 first (the GPU builds the same array).
    pub fn pairs(&self) -> &[(u64, u64)] {
        &self.pairs
    }

    /// The interval of string `w` of `d` bases (`d` <= depth; the empty string's is the whole
    /// BWT).
    pub fn interval(&self, d: u32, w: u64) -> (u64, u64) {
        if d == 0 {
            return (0, self.seq_len);
        }
        self.pairs[Self::level_start(d) + w as usize]
    }

    /// The intervals of the four extensions `c·w` of string `w` of `d` bases (`d` < depth).
    pub fn extensions(&self, d: u32, w: u64) -> [(u64, u64); 4] {
        let at = Self::level_start(d + 1) + 4 * w as usize;
        self.pairs[at..at + 4].try_into().expect("four extensions")
    }
}

/// The intervals of `c·w` for c = 0..4, from `w`'s interval.
fn extensions(bwt: &Bwt, (k, l): (u64, u64)) -> [(u64, u64); 4] {
    if k > l {
        return [EMPTY; 4];
    }
    let l2 = bwt.l2();
    let (cnt_k, cnt_l) = bwt.occ4_pair(k.wrapping_sub(1), l);
    std::array::from_fn(|c| (l2[c] + cnt_k[c] + 1, l2[c] + cnt_l[c]))
}
