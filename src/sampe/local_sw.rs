//! Local (Smith-Waterman) alignment as bwa's ksw_align computes it for sampe's mate rescue:
//! Farrar's striped layout with SWPS3's lazy-F loop, emulated lane by lane so that the
//! scores, the end chosen among ties and the start found by the reverse pass are bwa's. The
//! layout matters: E is not updated from the lazy-F pass (an insertion is never followed by a
//! deletion across lanes), and the query is padded to whole vectors with zero scores.

/// Reads shorter than this use 16 byte lanes (bwa's KSW_XBYTE), longer ones 8 word lanes.
const BYTE_LANES_BELOW: usize = 250;

/// A lane's score type: bwa's biased unsigned bytes (16 lanes) or signed words (8 lanes). Both
/// compute the same clamped-at-0 scores; bytes are half the work per vector.
trait Lane: Copy + Ord + Default {
    /// A match score as the profile stores it.
    fn score(s: i8) -> Self;
    /// `max(0, h + s)` for a stored score.
    fn add_score(h: Self, s: Self) -> Self;
    /// `max(0, h - c)`.
    fn sub(h: Self, c: i32) -> Self;
    fn get(self) -> i32;
}

/// Scores are stored with bwa's bias (the matrix minimum, -3, moved to 0); reads under 250
/// bases keep every sum below 255.
const BYTE_BIAS: u8 = 3;

impl Lane for u8 {
    fn score(s: i8) -> u8 {
        (s as i16 + BYTE_BIAS as i16) as u8
    }
    #[inline(always)]
    fn add_score(h: u8, s: u8) -> u8 {
        h.saturating_add(s).saturating_sub(BYTE_BIAS)
    }
    #[inline(always)]
    fn sub(h: u8, c: i32) -> u8 {
        h.saturating_sub(c as u8)
    }
    fn get(self) -> i32 {
        self as i32
    }
}

impl Lane for i16 {
    fn score(s: i8) -> i16 {
        s as i16
    }
    #[inline(always)]
    fn add_score(h: i16, s: i16) -> i16 {
        (h + s).max(0)
    }
    #[inline(always)]
    fn sub(h: i16, c: i32) -> i16 {
        (h - c as i16).max(0)
    }
    fn get(self) -> i32 {
        self as i32
    }
}

/// Query profile of one striped pass with `P` lanes of `L`.
struct Striped<L: Lane, const P: usize> {
    slen: usize,
    /// Scores per target base and segment; lane `l` of segment `seg` is query position
    /// `seg + l * slen` (score 0 past the end of the query).
    profile: Vec<[L; P]>,
}

impl<L: Lane, const P: usize> Striped<L, P> {
    fn new(query: &[u8], mat: &[i8; 25]) -> Striped<L, P> {
        let slen = query.len().div_ceil(P);
        let mut profile = vec![[L::default(); P]; 5 * slen];
        for a in 0..5 {
            for seg in 0..slen {
                profile[a * slen + seg] = std::array::from_fn(|l| {
                    let k = seg + l * slen;
                    L::score(if k < query.len() { mat[a * 5 + query[k] as usize] } else { 0 })
                });
            }
        }
        Striped { slen, profile }
    }

    /// ksw_u8/ksw_i16: the best score, the first target row reaching it (-1 if none is
    /// positive), the first query position of that row holding it, and the best score of
    /// the row maxima recorded away from that row (bwa's score2, -1 if none). Stops at the
    /// first row reaching `stop`.
    fn run(&self, target: &[u8], gapo: i32, gape: i32, stop: i32) -> Pass {
        let slen = self.slen;
        let (oe, ext) = (gapo + gape, gape);
        let zero = [L::default(); P];
        let mut h0 = vec![zero; slen];
        let mut h1 = vec![zero; slen];
        let mut e = vec![zero; slen];
        let mut hmax = vec![zero; slen];
        let (mut gmax, mut te) = (0i32, -1i32);
        // bwa's b array: (row maximum, row), a new entry unless the last one is the previous row.
        let mut rows: Vec<(i32, i32)> = Vec::new();
        for (i, &t) in target.iter().enumerate() {
            let s = &self.profile[t as usize * slen..][..slen];
            // H(i-1, j-1) for segment 0: the last segment moved up one lane.
            let mut h = zero;
            h[1..].copy_from_slice(&h0[slen - 1][..P - 1]);
            let mut f = zero;
            let mut vmax = zero;
            for j in 0..slen {
                let (ej, sj) = (e[j], s[j]);
                let mut hv = zero;
                let mut en = zero;
                for l in 0..P {
                    hv[l] = L::add_score(h[l], sj[l]).max(ej[l]).max(f[l]);
                    vmax[l] = vmax[l].max(hv[l]);
                    en[l] = L::sub(ej[l], ext).max(L::sub(hv[l], oe));
                    f[l] = L::sub(f[l], ext).max(L::sub(hv[l], oe));
                }
                h1[j] = hv;
                e[j] = en;
                h = h0[j];
            }
            // Lazy F: carry F across the lane boundary until it no longer raises any H.
            'lazy: for _ in 0..16 {
                f.copy_within(0..P - 1, 1);
                f[0] = L::default();
                for hj in h1.iter_mut() {
                    let mut raised = 0u8;
                    for l in 0..P {
                        let hv = hj[l].max(f[l]);
                        hj[l] = hv;
                        f[l] = L::sub(f[l], ext);
                        raised |= (f[l] > L::sub(hv, oe)) as u8;
                    }
                    if raised == 0 {
                        break 'lazy;
                    }
                }
            }
            let imax = vmax.iter().copied().max().unwrap_or_default().get();
            let i = i as i32;
            match rows.last_mut() {
                Some(last) if last.1 + 1 == i => {
                    if last.0 < imax {
                        *last = (imax, i);
                    }
                }
                _ => rows.push((imax, i)),
            }
            if imax > gmax {
                gmax = imax;
                te = i;
                hmax.copy_from_slice(&h1);
                if gmax >= stop {
                    break;
                }
            }
            std::mem::swap(&mut h0, &mut h1);
        }
        let (mut best, mut qe) = (-1i32, -1i32);
        for (seg, v) in hmax.iter().enumerate() {
            for (l, &x) in v.iter().enumerate() {
                let (x, q) = (x.get(), (seg + l * slen) as i32);
                if x > best || (x == best && q < qe) {
                    best = x;
                    qe = q;
                }
            }
        }
        // Rows within `score` of the best (the largest match score is 1) are the same hit.
        let (low, high) = (te - gmax, te + gmax);
        let score2 = rows.iter().filter(|&&(_, e)| e < low || e > high).map(|&(s, _)| s).fold(-1, i32::max);
        Pass { score: gmax, te, qe, score2 }
    }
}

/// One pass with bwa's lane count for this query length.
fn pass(query: &[u8], lanes_of: usize, target: &[u8], mat: &[i8; 25], gapo: i32, gape: i32, stop: i32) -> Pass {
    if lanes_of < BYTE_LANES_BELOW {
        Striped::<u8, 16>::new(query, mat).run(target, gapo, gape, stop)
    } else {
        Striped::<i16, 8>::new(query, mat).run(target, gapo, gape, stop)
    }
}

/// What one striped pass finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pass {
    score: i32,
    te: i32,
    qe: i32,
    score2: i32,
}

/// A local alignment: score, inclusive query/target ranges, and the best score of another
/// hit in the target (bwa's score2; -1 if none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalHit {
    pub score: i32,
    pub score2: i32,
    pub qb: i32,
    pub qe: i32,
    pub tb: i32,
    pub te: i32,
}

/// ksw_align with KSW_XSTART (bwa_sw_core's call): the end from a forward pass, the start
/// from a pass over the reversed prefixes. `None` when the passes disagree (bwa would then
/// index before the sequences).
pub fn align(query: &[u8], target: &[u8], mat: &[i8; 25], gapo: i32, gape: i32) -> Option<LocalHit> {
    let Pass { score, te, qe, score2 } = pass(query, query.len(), target, mat, gapo, gape, i32::MAX);
    if te < 0 {
        return Some(LocalHit { score, score2, qb: 0, qe, tb: 0, te });
    }
    if qe as usize >= query.len() {
        return None; // the best cell in the padding: cannot happen (padding scores 0), kept from panicking
    }
    let rq: Vec<u8> = query[..=qe as usize].iter().rev().copied().collect();
    // bwa reverses only the target prefix in place and scans the whole array.
    let mut rt: Vec<u8> = target[..=te as usize].iter().rev().copied().collect();
    rt.extend_from_slice(&target[te as usize + 1..]);
    // The reverse pass keeps the forward pass's lane width.
    let back = pass(&rq, query.len(), &rt, mat, gapo, gape, score);
    if back.score != score || te - back.te < 0 || qe - back.qe < 0 {
        return None;
    }
    Some(LocalHit { score, score2, qb: qe - back.qe, qe, tb: te - back.te, te })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sam::ksw::score_matrix;

    /// Seeded pseudo-random bases (no periodic repeats).
    fn random_bases(n: usize, mut x: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 33) as u8 & 3
            })
            .collect()
    }

    #[test]
    fn finds_an_embedded_read_with_a_mismatch() {
        let mat = score_matrix(1, 3);
        let target = random_bases(200, 0x9e37_79b9);
        let mut query = target[60..120].to_vec();
        query[30] = (query[30] + 1) % 4;
        let hit = align(&query, &target, &mat, 5, 1).unwrap();
        assert_eq!((hit.qb, hit.qe, hit.tb, hit.te), (0, 59, 60, 119));
        assert_eq!(hit.score, 59 - 3);
        assert!(hit.score2 < hit.score);
    }

    #[test]
    fn word_lanes_agree_with_byte_lanes() {
        let mat = score_matrix(1, 3);
        let target = random_bases(300, 12345);
        let query: Vec<u8> =
            target[40..140].iter().enumerate().map(|(i, &b)| if i % 17 == 0 { 4 } else { b }).collect();
        let a = Striped::<u8, 16>::new(&query, &mat).run(&target, 5, 1, i32::MAX);
        let b = Striped::<i16, 8>::new(&query, &mat).run(&target, 5, 1, i32::MAX);
        let c = Striped::<i16, 16>::new(&query, &mat).run(&target, 5, 1, i32::MAX);
        assert_eq!(a, c);
        assert_eq!(a, b);
    }
}
