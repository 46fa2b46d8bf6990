//! Mate rescue (bwape.c's bwa_paired_sw and bwa_sw_core): when a pair did not pair up and
//! one end maps with quality 17 or more, the other end is searched by local alignment in the
//! window where the insert size puts it; a hit good enough replaces it (XT:A:M), and the
//! mapping qualities of both ends are recomputed.

use bcuda_index::refseqs::pac_base;

use super::cmath::{c_int, erfc};
use super::insert_size::InsertSize;
use super::local_sw;
use crate::reads::ReadRef;
use crate::sam::hits::{HitType, Placement};
use crate::sam::ksw::{self, OP_D, OP_I, OP_M, OP_S};
use crate::sam::record::FLAG_PROPER_PAIR;
use crate::sam::refine::revcomp;

/// bwa's SW_MIN_MATCH_LEN and SW_MIN_MAPQ.
const MIN_MATCH_LEN: i64 = 20;
const MIN_MAPQ: u32 = 17;

/// A local hit of the mate: CIGAR with soft clips, start, and its mismatch/gap counts.
struct SwHit {
    cigar: Vec<u32>,
    pos: i64,
    n_mm: u32,
    n_gapo: u32,
    n_gape: u32,
}

/// bwa_sw_core: aligns `seq` (reference orientation) within `[beg, beg + reglen)`.
fn sw_core(pac: &[u8], l_pac: i64, seq: &[u8], beg: i64, reglen: i64) -> Option<SwHit> {
    let len = seq.len() as i64;
    if reglen < MIN_MATCH_LEN || l_pac - beg < len {
        return None;
    }
    let n_amb = seq.iter().filter(|&&c| c >= 4).count() as i64;
    if n_amb as f32 / len as f32 >= 0.25 || len - n_amb < MIN_MATCH_LEN {
        return None;
    }
    let ref_end = (beg + reglen).min(l_pac);
    let ref_seq: Vec<u8> = (beg..ref_end).map(|k| pac_base(pac, k as u64)).collect();
    let mat = ksw::score_matrix(1, 3);
    let r = local_sw::align(seq, &ref_seq, &mat, 5, 1)?;
    // A poor hit, or one of tandem copies.
    if (r.score as i64) < MIN_MATCH_LEN || r.score2 == r.score {
        return None;
    }
    let (qb, qe, tb, te) = (r.qb as usize, r.qe as usize, r.tb as usize, r.te as usize);
    let (gscore, mut cigar) = ksw::global(&seq[qb..=qe], &ref_seq[tb..=te], &mat, 5, 1, 50);
    if gscore != r.score {
        return None;
    }
    let (mut ref_used, mut query_used) = (0i64, 0i64);
    for &c in &cigar {
        let n = (c >> 4) as i64;
        match c & 0xf {
            OP_M => {
                ref_used += n;
                query_used += n;
            }
            OP_D => ref_used += n,
            _ => query_used += n,
        }
    }
    if ref_used < MIN_MATCH_LEN || query_used < MIN_MATCH_LEN {
        return None;
    }
    let (mut n_mm, mut n_gapo, mut n_gape) = (0u32, 0u32, 0u32);
    let (mut x, mut y) = (tb, qb);
    for &c in &cigar {
        let n = (c >> 4) as usize;
        match c & 0xf {
            OP_M => {
                n_mm += (0..n).filter(|&l| ref_seq[x + l] < 4 && seq[y + l] < 4 && ref_seq[x + l] != seq[y + l]).count()
                    as u32;
                x += n;
                y += n;
            }
            OP_D => {
                x += n;
                n_gapo += 1;
                n_gape += n as u32 - 1;
            }
            OP_I => {
                y += n;
                n_gapo += 1;
                n_gape += n as u32 - 1;
            }
            _ => {}
        }
    }
    if qb > 0 {
        cigar.insert(0, (qb as u32) << 4 | OP_S);
    }
    if qe + 1 < seq.len() {
        cigar.push(((seq.len() - qe - 1) as u32) << 4 | OP_S);
    }
    // bwa packs the counts into 8-bit fields.
    Some(SwHit { cigar, pos: beg + tb as i64, n_mm: n_mm & 0xff, n_gapo: n_gapo & 0xff, n_gape: n_gape & 0xff })
}

/// Outcome counts for the summary (bwa's "singletons mated" / "discordant pairs fixed").
#[derive(Clone, Copy, Debug, Default)]
pub struct RescueCounts {
    pub tried: [u64; 2],
    pub rescued: [u64; 2],
}

impl std::ops::Add for RescueCounts {
    type Output = RescueCounts;
    fn add(self, o: RescueCounts) -> RescueCounts {
        RescueCounts {
            tried: [self.tried[0] + o.tried[0], self.tried[1] + o.tried[1]],
            rescued: [self.rescued[0] + o.rescued[0], self.rescued[1] + o.rescued[1]],
        }
    }
}

/// The window where the mate of `r` (mapped) lies: after it when `r` is forward, before it
/// when reverse (bwa's __set_rght_coor / __set_left_coor, with their C conversions).
fn window(r: &Placement, r_len: i64, mate_len: i64, ii: &InsertSize, l_pac: i64) -> (i64, i64) {
    let pos = r.pos as i64;
    if !r.reverse {
        let mut a = (pos as f64 + ii.avg - 3.0 * ii.std - mate_len as f64 * 1.5) as i64;
        let mut b = (a as f64 + 6.0 * ii.std + (2 * mate_len) as f64) as i64;
        if a < pos + r_len {
            a = pos + r_len;
        }
        if b > l_pac {
            b = l_pac;
        }
        (a, b)
    } else {
        let mut a = ((pos + r_len) as f64 - ii.avg - 3.0 * ii.std - mate_len as f64 * 0.5) as i64;
        let mut b = (a as f64 + 6.0 * ii.std + (2 * mate_len) as f64) as i64;
        if a < 0 {
            a = 0;
        }
        // bwa compares the signed end with the unsigned position.
        if b as u64 > r.pos {
            b = pos;
        }
        (a, b)
    }
}

/// Penalty-like score of an alignment's differences, in bwa's units (`clip` soft-clipped bases).
fn diff_score(n_mm: u32, n_gapo: u32, n_gape: u32, clip: u32) -> i32 {
    c_int((n_mm * 9 + n_gapo * 13 + n_gape * 2 + clip * 3) as f64 / 3.0 * 8.0 + 0.499)
}

/// bwa_paired_sw for one pair; returns the SW CIGAR of a rescued end.
pub fn rescue(
    places: &mut [Placement; 2],
    reads: [&ReadRef<'_>; 2],
    ii: &InsertSize,
    pac: &[u8],
    l_pac: u64,
    counts: &mut RescueCounts,
) -> [Option<Vec<u32>>; 2] {
    let mut out = [None, None];
    if !((places[0].mapq >= MIN_MAPQ || places[1].mapq >= MIN_MAPQ) && places[0].flags & FLAG_PROPER_PAIR == 0) {
        return out;
    }
    let l_pac_i = l_pac as i64;
    let singleton = !places[0].kind.is_mapped() || !places[1].kind.is_mapped();
    counts.tried[singleton as usize] += 1;
    let mut hits: [Option<SwHit>; 2] = [None, None];
    let mut mq_adjust = [255i32; 2];
    for k in 0..2 {
        let r = &places[1 - k];
        if !r.kind.is_mapped() {
            continue;
        }
        let mate = reads[k].aligned();
        let (beg, end) = window(r, reads[1 - k].len as i64, mate.len() as i64, ii, l_pac_i);
        let seq = if r.reverse { mate.to_vec() } else { revcomp(mate) };
        let Some(hit) = sw_core(pac, l_pac_i, &seq, beg, (end - beg) as i32 as i64) else { continue };
        let m = &places[k];
        if m.kind.is_mapped() {
            // An end that has its own hit keeps it when the SW hit is worse.
            let first_clip = |c: u32| if c & 0xf == OP_S { c >> 4 } else { 0 };
            let clip = first_clip(hit.cigar[0]) + first_clip(hit.cigar[hit.cigar.len() - 1]);
            let mut s_old = diff_score(m.n_mm, m.n_gapo, m.n_gape, 0);
            let mut s_new = diff_score(hit.n_mm, hit.n_gapo, hit.n_gape, clip);
            s_old = c_int(s_old as f64 + -4.343 * (ii.ap_prior / l_pac as f64).ln());
            // bwa's constant: the mapped insert assumed at 1.5 sigma (its +.499 falls inside the log).
            s_new += c_int(-4.343 * (0.5 * erfc(std::f64::consts::FRAC_1_SQRT_2 * 1.5) + 0.499).ln());
            if s_old < s_new {
                mq_adjust[k] = s_new - s_old;
                continue;
            }
            mq_adjust[k] = s_old - s_new;
        }
        hits[k] = Some(hit);
    }
    let (k, mut mapq) = match (&hits[0], &hits[1]) {
        (Some(_), Some(_)) => {
            let k = if places[0].mapq < places[1].mapq { 0 } else { 1 };
            (k, (places[1].mapq as i32 - places[0].mapq as i32).abs())
        }
        (Some(_), None) => (0, places[1].mapq as i32),
        (None, Some(_)) => (1, places[0].mapq as i32),
        (None, None) => return out,
    };
    let hit = hits[k].take().expect("chosen end has a hit");
    if places[k].pos == hit.pos as u64 {
        return out;
    }
    counts.rescued[singleton as usize] += 1;
    let [p0, p1] = places;
    let (m, r) = if k == 0 { (p0, p1) } else { (p1, p0) };
    let tmp = (r.mapq as i32 - m.mapq as i32 / 2 - 8).max(1);
    mapq = mapq.min(tmp);
    m.mapq = mapq as u32;
    r.mapq = mapq as u32;
    let se = r.se_mapq.min(mapq as u32);
    m.se_mapq = se;
    r.se_mapq = se;
    if m.mapq as i32 > mq_adjust[k] {
        m.mapq = mq_adjust[k] as u32;
    }
    // bwa also caps the rescued end's seQ here, then overwrites it with its mate's below.
    m.kind = HitType::MateRescued;
    m.pos = hit.pos as u64;
    m.se_mapq = r.se_mapq;
    m.reverse = !r.reverse;
    m.n_mm = hit.n_mm;
    m.n_gapo = hit.n_gapo;
    m.n_gape = hit.n_gape;
    m.flags |= FLAG_PROPER_PAIR;
    r.flags |= FLAG_PROPER_PAIR;
    out[k] = Some(hit.cigar);
    out
}
