//! Local (Smith-Waterman) alignment as bwa's ksw_align computes it for sampe's mate rescue:
//! Farrar's striped layout with SWPS3's lazy-F loop, emulated lane by lane so that the
//! scores, the end chosen among ties and the start found by the reverse pass are bwa's. The
//! layout matters: E is not updated from the lazy-F pass (an insertion is never followed by a
//! deletion across lanes), and the query is padded to whole vectors with zero scores.

/// Lanes per vector: 16 bytes (reads shorter than 250 bases, bwa's KSW_XBYTE) or 8 words.
fn lanes(qlen: usize) -> usize {
    if qlen < 250 {
        16
    } else {
        8
    }
}

/// Query profile and scratch of one striped pass.
struct Striped {
    lanes: usize,
    slen: usize,
    /// Scores per target base, segment and lane (query position `seg + lane * slen`).
    profile: Vec<i32>,
}

impl Striped {
    fn new(query: &[u8], lanes: usize, mat: &[i8; 25]) -> Striped {
        let slen = query.len().div_ceil(lanes);
        let mut profile = vec![0; 5 * slen * lanes];
        for a in 0..5 {
            for seg in 0..slen {
                for lane in 0..lanes {
                    let k = seg + lane * slen;
                    profile[(a * slen + seg) * lanes + lane] = if k < query.len() { mat[a * 5 + query[k] as usize] as i32 } else { 0 };
                }
            }
        }
        Striped { lanes, slen, profile }
    }

    /// ksw_u8/ksw_i16: the best score, the first target row reaching it (-1 if none is
    /// positive), the first query position of that row holding it, and the best score of
    /// the row maxima recorded away from that row (bwa's score2, -1 if none). Stops at the
    /// first row reaching `stop`.
    fn run(&self, target: &[u8], gapo: i32, gape: i32, stop: i32) -> Pass {
        let (p, slen) = (self.lanes, self.slen);
        let n = slen * p;
        let (oe, e_ext) = (gapo + gape, gape);
        let mut h0 = vec![0i32; n];
        let mut h1 = vec![0i32; n];
        let mut e = vec![0i32; n];
        let mut hmax = vec![0i32; n];
        let (mut gmax, mut te) = (0i32, -1i32);
        let mut h = vec![0i32; p];
        let mut f = vec![0i32; p];
        let mut vmax = vec![0i32; p];
        // bwa's b array: (row maximum, row), a new entry unless the last one is the previous row.
        let mut rows: Vec<(i32, i32)> = Vec::new();
        for (i, &t) in target.iter().enumerate() {
            let s = &self.profile[t as usize * n..][..n];
            // H(i-1, j-1) for segment 0: the last segment moved up one lane.
            h[0] = 0;
            h[1..].copy_from_slice(&h0[(slen - 1) * p..(slen - 1) * p + p - 1]);
            f.fill(0);
            vmax.fill(0);
            for j in 0..slen {
                let r = j * p..(j + 1) * p;
                for l in 0..p {
                    let ej = e[r.start + l];
                    let hv = (h[l] + s[r.start + l]).max(ej).max(f[l]).max(0);
                    vmax[l] = vmax[l].max(hv);
                    h1[r.start + l] = hv;
                    e[r.start + l] = (ej - e_ext).max(hv - oe).max(0);
                    f[l] = (f[l] - e_ext).max(hv - oe).max(0);
                }
                h.copy_from_slice(&h0[r]);
            }
            'lazy: for _ in 0..16 {
                f.copy_within(0..p - 1, 1);
                f[0] = 0;
                for j in 0..slen {
                    let mut done = true;
                    for l in 0..p {
                        let hv = h1[j * p + l].max(f[l]);
                        h1[j * p + l] = hv;
                        f[l] = (f[l] - e_ext).max(0);
                        done &= f[l] <= (hv - oe).max(0);
                    }
                    if done {
                        break 'lazy;
                    }
                }
            }
            let imax = vmax.iter().copied().max().unwrap_or(0);
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
        for (i, &v) in hmax.iter().enumerate() {
            let q = (i / p + i % p * slen) as i32;
            if v > best {
                best = v;
                qe = q;
            } else if v == best && q < qe {
                qe = q;
            }
        }
        // Rows within `score` of the best (the largest match score is 1) are the same hit.
        let (low, high) = (te - gmax, te + gmax);
        let score2 = rows.iter().filter(|&&(_, e)| e < low || e > high).map(|&(s, _)| s).fold(-1, i32::max);
        Pass { score: gmax, te, qe, score2 }
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
    let p = lanes(query.len());
    let Pass { score, te, qe, score2 } = Striped::new(query, p, mat).run(target, gapo, gape, i32::MAX);
    if te < 0 {
        return Some(LocalHit { score, score2, qb: 0, qe, tb: 0, te });
    }
    let rq: Vec<u8> = query[..=qe as usize].iter().rev().copied().collect();
    // bwa reverses only the target prefix in place and scans the whole array.
    let mut rt: Vec<u8> = target[..=te as usize].iter().rev().copied().collect();
    rt.extend_from_slice(&target[te as usize + 1..]);
    let back = Striped::new(&rq, p, mat).run(&rt, gapo, gape, score);
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
        let query: Vec<u8> = target[40..140].iter().enumerate().map(|(i, &b)| if i % 17 == 0 { 4 } else { b }).collect();
        let a = Striped::new(&query, 16, &mat).run(&target, 5, 1, i32::MAX);
        let b = Striped::new(&query, 8, &mat).run(&target, 5, 1, i32::MAX);
        assert_eq!(a, b);
    }
}
