//! Choosing the pair (bwape.c's pairing and the PE loop of bwa_cal_pac_pos_pe): every hit of
//! both ends is placed on the forward strand, forward hits are paired with the reverse hits
//! of the other end that follow them within the insert size bound, the best pair by summed
//! aln score and insert-size likelihood wins, and the mapping qualities are adjusted by how
//! far the ends had to move. Then each end gets its XA candidates (`-n`, or `-N` for ends
//! that did not pair).

use bcuda_index::{Bwt, SuffixArray};

use super::cmath::{c_int, erfc};
use super::insert_size::InsertSize;
use crate::sai::AlnHit;
use crate::sam::hits::{self, log_n, HitType, Placement};
use crate::sam::record::FLAG_PROPER_PAIR;

/// sampe's pairing options.
#[derive(Clone, Copy, Debug)]
pub struct PairingOptions {
    /// `-a`: the insert size bound when none is estimated.
    pub max_isize: i32,
    /// `-o`: ends with more hits than this are not paired.
    pub max_occ: i64,
    /// `-n`: XA hits for paired ends.
    pub n_multi: usize,
    /// `-N`: XA hits for ends of discordant pairs.
    pub n_multi_discordant: usize,
    /// The aln mismatch penalty (from the .sai).
    pub s_mm: i32,
}

/// One end of a pair while pairing: its hits and current placement.
pub struct End<'a> {
    pub hits: &'a [AlnHit],
    pub place: Placement,
    /// Text position of the chosen hit's SA row, when mapped (looked up once, reused).
    pub main_text_pos: Option<u64>,
    /// Aligned (trimmed) and whole read lengths.
    pub len: usize,
    pub full_len: usize,
}

/// A position of one hit: bwa's pair64_t, `y` = hit index << 2 | strand << 1 | end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct HitPos {
    x: u64,
    y: u64,
}

impl HitPos {
    const NONE: HitPos = HitPos { x: u64::MAX, y: u64::MAX };

    fn end(self) -> usize {
        (self.y & 1) as usize
    }
    fn reverse(self) -> bool {
        self.y >> 1 & 1 == 1
    }
    fn hit(self) -> usize {
        (self.y >> 2) as usize
    }
}

/// Thomas Wang's 64-bit hash (bwa's hash_64), the tie-breaker between equal pairs.
fn hash_64(mut key: u64) -> u64 {
    key = key.wrapping_add(!(key << 32));
    key ^= key >> 22;
    key = key.wrapping_add(!(key << 13));
    key ^= key >> 8;
    key = key.wrapping_add(key << 3);
    key ^= key >> 15;
    key = key.wrapping_add(!(key << 27));
    key ^= key >> 31;
    key
}

/// The best and second-best pair scores (score << 32 | hash) and how many pairs share them.
struct Best {
    o_score: u64,
    subo_score: u64,
    o_n: u32,
    subo_n: u32,
    o_pos: [HitPos; 2],
}

impl Best {
    /// bwa's __pairing_aux: `u` is a forward hit, `v` a reverse hit of the other end.
    fn consider(&mut self, u: HitPos, v: HitPos, ends: &[End; 2], max_len: u64, ii: &InsertSize, opt: &PairingOptions) {
        let l = v.x.wrapping_add(ends[v.end()].len as u64).wrapping_sub(u.x);
        let in_bound = if ii.high != 0 { l <= ii.high_bayesian } else { l <= opt.max_isize as i64 as u64 };
        if u.x == u64::MAX || v.x <= u.x || l < max_len || !in_bound {
            return;
        }
        let mut s = (ends[v.end()].hits[v.hit()].score as u64 + ends[u.end()].hits[u.hit()].score as u64) * 10;
        if ii.high != 0 {
            let z = std::f64::consts::FRAC_1_SQRT_2 * (l as f64 - ii.avg).abs() / ii.std;
            s = s.wrapping_add(c_int(-4.343 * (0.5 * erfc(z)).ln() + 0.499) as i64 as u64);
        }
        s = s << 32 | hash_64(u.x << 32 | v.x) as u32 as u64;
        let (sh, oh) = (s >> 32, self.o_score >> 32);
        if sh == oh {
            self.o_n += 1;
        } else if sh < oh {
            self.subo_n += self.o_n;
            self.o_n = 1;
        } else {
            self.subo_n += 1;
        }
        if s < self.o_score {
            self.subo_score = self.o_score;
            self.o_score = s;
            self.o_pos[u.end()] = u;
            self.o_pos[v.end()] = v;
        } else if s < self.subo_score {
            self.subo_score = s;
        }
    }
}

/// bwa's pairing: moves the ends to the best pair, sets the proper-pair flag and mapping
/// qualities.
fn pair_hits(ends: &mut [End; 2], positions: &mut [HitPos], ii: &InsertSize, opt: &PairingOptions) {
    let max_len = ends[0].full_len.max(ends[1].full_len) as u64;
    let mut best = Best { o_score: u64::MAX, subo_score: u64::MAX, o_n: 0, subo_n: 0, o_pos: [HitPos::NONE; 2] };
    positions.sort_unstable();
    // The last two forward hits of each end.
    let mut last = [[HitPos::NONE; 2]; 2];
    for &x in positions.iter() {
        if x.reverse() {
            let other = 1 - x.end();
            best.consider(last[other][1], x, ends, max_len, ii, opt);
            best.consider(last[other][0], x, ends, max_len, ii, opt);
        } else {
            last[x.end()][0] = last[x.end()][1];
            last[x.end()][1] = x;
        }
    }
    if best.o_score == u64::MAX {
        return;
    }
    let mut mapq_p: i64 = 0; // the highest mapping quality when an end moves
    if best.o_n == 1 {
        let gap = (best.subo_score >> 32) as i64 - (best.o_score >> 32) as i64;
        mapq_p = if best.subo_score == u64::MAX {
            29
        } else if gap > opt.s_mm as i64 * 10 {
            23
        } else {
            (gap / 2 - log_n(best.subo_n.min(255) as u64) as i64).max(0)
        };
    }
    let stays = |e: &End, w: HitPos| e.place.pos == w.x && e.place.reverse == w.reverse();
    let (stay0, stay1) = (stays(&ends[0], best.o_pos[0]), stays(&ends[1], best.o_pos[1]));
    let [p0, p1] = ends;
    let (p0, p1) = (&mut p0.place, &mut p1.place);
    match (stay0, stay1) {
        (true, true) => {
            if p0.mapq > 0 && p1.mapq > 0 {
                let q = (p0.mapq + p1.mapq).min(60);
                p0.mapq = q;
                p1.mapq = q;
            } else {
                if p0.mapq == 0 {
                    p0.mapq = if mapq_p + 7 < p1.mapq as i64 { (mapq_p + 7) as u32 } else { p1.mapq };
                }
                if p1.mapq == 0 {
                    p1.mapq = if mapq_p + 7 < p0.mapq as i64 { (mapq_p + 7) as u32 } else { p0.mapq };
                }
            }
        }
        (true, false) => {
            p1.se_mapq = 0;
            p1.mapq = (p0.mapq as i64).min(mapq_p) as u32;
        }
        (false, true) => {
            p0.se_mapq = 0;
            p0.mapq = (p1.mapq as i64).min(mapq_p) as u32;
        }
        (false, false) => {
            p0.se_mapq = 0;
            p1.se_mapq = 0;
            let q = (mapq_p - 20).max(0) as u32;
            p0.mapq = q;
            p1.mapq = q;
        }
    }
    for (e, w) in ends.iter_mut().zip(best.o_pos) {
        let r = &e.hits[w.hit()];
        let q = &mut e.place;
        q.flags |= FLAG_PROPER_PAIR;
        if q.pos != w.x || q.reverse != w.reverse() {
            // The aln record's counts, but not its ref_shift: bwa keeps the chosen hit's.
            q.n_mm = r.n_mm as u32;
            q.n_gapo = r.n_gapo as u32;
            q.n_gape = r.n_gape as u32;
            q.reverse = w.reverse();
            q.score = r.score;
            q.pos = w.x;
        }
    }
}

/// SA rows of one end already looked up, and their text positions: bwa looks rows up again
/// for pairing and XA; the answer is the same, and each walk of the suffix array is a chain
/// of cache misses. Only the first few rows are kept: XA lists are short, and an end with
/// thousands of hits must not be searched linearly for each of them.
struct KnownRows(Vec<(u64, u64)>);

/// Rows kept per end (XA takes at most `-N` + 1 = 11 by default).
const KNOWN_ROWS: usize = 32;

impl KnownRows {
    fn position(&mut self, row: u64, bwt: &Bwt, sa: &SuffixArray) -> u64 {
        if let Some(&(_, p)) = self.0.iter().find(|&&(r, _)| r == row) {
            return p;
        }
        let p = sa.position(bwt, row);
        if self.0.len() < KNOWN_ROWS {
            self.0.push((row, p));
        }
        p
    }
}

/// The PE step of bwa_cal_pac_pos_pe for one pair, after the insert size is known.
pub fn pair(ends: &mut [End; 2], ii: &InsertSize, opt: &PairingOptions, bwt: &Bwt, sa: &SuffixArray, l_pac: u64) {
    let mapped = |e: &End| matches!(e.place.kind, HitType::Unique | HitType::Repeat);
    let mut known =
        [0, 1].map(|j| KnownRows(ends[j].main_text_pos.map(|p| (ends[j].place.sa, p)).into_iter().collect()));
    if mapped(&ends[0]) && mapped(&ends[1]) {
        let n_occ = |e: &End| e.hits.iter().map(|h| (h.l - h.k + 1) as i64).sum::<i64>();
        if n_occ(&ends[0]) > opt.max_occ || n_occ(&ends[1]) > opt.max_occ {
            return; // bwa skips the XA step too
        }
        let mut positions = Vec::new();
        for (j, e) in ends.iter().enumerate() {
            // Every hit is placed with the chosen hit's ref_shift, as bwa does.
            let ref_len = e.len as i64 + e.place.ref_shift;
            for (k, h) in e.hits.iter().enumerate() {
                for row in h.k..=h.l {
                    let (pos, reverse) = hits::text_to_pos(known[j].position(row, bwt, sa), l_pac, ref_len);
                    positions.push(HitPos {
                        x: pos.unwrap_or(u64::MAX),
                        y: (k as u64) << 2 | (reverse as u64) << 1 | j as u64,
                    });
                }
            }
        }
        pair_hits(ends, &mut positions, ii, opt);
    }
    if opt.n_multi == 0 && opt.n_multi_discordant == 0 {
        return;
    }
    for j in 0..2 {
        let mate_mapped = ends[1 - j].place.kind.is_mapped();
        let e = &mut ends[j];
        if !e.place.kind.is_mapped() {
            continue;
        }
        let p = &e.place;
        let n = if p.flags & FLAG_PROPER_PAIR == 0
            && mate_mapped
            && (p.c1 + p.c2).wrapping_sub(1) <= opt.n_multi_discordant as u64
        {
            opt.n_multi_discordant
        } else {
            opt.n_multi
        };
        e.place.others = hits::xa_candidates(e.hits, n);
        let known = &mut known[j];
        hits::place_others(&mut e.place, |row| known.position(row, bwt, sa), l_pac, e.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_bwa() {
        // Values from bwa's hash_64 (utils.h) compiled in C.
        assert_eq!(hash_64(0), 0x6a39_6cd3_9c35_2659);
        assert_eq!(hash_64(1), 0x2035_3c45_b09b_c659);
        assert_eq!(hash_64(12345 << 32 | 67890), 0x7f40_63a1_1463_a2e1);
    }
}
