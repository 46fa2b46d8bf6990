//! From a read's .sai hits to its alignment: the random pick among the best hits (bwa's
//! drand48 sequence), the hit counts behind X0/X1 and the mapping quality, the position and
//! strand from the suffix array, and the extra hits printed in XA (bwase.c).

use bcuda_index::rand48::Rand48;
use bcuda_index::{Bwt, SuffixArray};

use std::path::Path;

use anyhow::{bail, Context};

use crate::aln_options::{cal_maxdiff, AVG_ERR};
use crate::reads::ReadRef;
use crate::sai::{AlnHit, SaiReader};

/// bwa's BWA_TYPE_*: printed in XT as N, U, R, M.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitType {
    NoMatch,
    Unique,
    Repeat,
    /// Placed by `sampe`'s Smith-Waterman search near its mate.
    MateRescued,
}

impl HitType {
    pub fn is_mapped(self) -> bool {
        self != HitType::NoMatch
    }
}

/// One extra hit for XA.
#[derive(Clone, Debug, Default)]
pub struct OtherHit {
    /// SA row, then (after [`place`]) the forward position.
    pub pos: u64,
    pub reverse: bool,
    pub gaps: u32,
    pub mismatches: u32,
    pub ref_shift: i64,
    pub cigar: Option<Vec<u32>>,
}

/// The chosen alignment of a read (bwa's bwa_seq_t fields that samse fills).
#[derive(Clone, Debug)]
pub struct Placement {
    pub kind: HitType,
    pub n_mm: u32,
    pub n_gapo: u32,
    pub n_gape: u32,
    pub score: u32,
    pub ref_shift: i64,
    /// SA row, then the forward position of the leftmost reference base.
    pub sa: u64,
    pub pos: u64,
    pub reverse: bool,
    pub c1: u64,
    pub c2: u64,
    pub mapq: u32,
    /// Single-end mapping quality (bwa's seQ), printed as SM/AM by sampe.
    pub se_mapq: u32,
    /// SAM flags set before printing (paired, proper pair, first/second: bwa's extra_flag).
    pub flags: u32,
    pub others: Vec<OtherHit>,
}

/// bwa_aln2seq_core: picks the reported hit uniformly among the best-scoring SA rows.
pub fn choose(hits: &[AlnHit], rng: &mut Rand48, max_xa: usize) -> Placement {
    let mut p = Placement {
        kind: HitType::NoMatch,
        n_mm: 0,
        n_gapo: 0,
        n_gape: 0,
        score: 0,
        ref_shift: 0,
        sa: 0,
        pos: 0,
        reverse: false,
        c1: 0,
        c2: 0,
        mapq: 0,
        se_mapq: 0,
        flags: 0,
        others: Vec::new(),
    };
    if hits.is_empty() {
        return p;
    }
    let best = hits[0].score;
    let mut cnt: u64 = 0;
    let mut i = 0;
    while i < hits.len() && hits[i].score <= best {
        let h = &hits[i];
        let n = h.l - h.k + 1;
        if rng.drand48() * (n + cnt) as f64 > cnt as f64 {
            p.n_mm = h.n_mm as u32;
            p.n_gapo = h.n_gapo as u32;
            p.n_gape = h.n_gape as u32;
            p.ref_shift = h.n_del as i64 - h.n_ins as i64;
            p.score = h.score;
            p.sa = h.k + (n as f64 * rng.drand48()) as u64;
        }
        cnt += n;
        i += 1;
    }
    p.c1 = cnt;
    p.c2 = hits[i..].iter().map(|h| h.l - h.k + 1).sum();
    p.kind = if p.c1 > 1 { HitType::Repeat } else { HitType::Unique };

    p.others = xa_candidates(hits, max_xa);
    p
}

/// The multi part of bwa_aln2seq_core: every SA row of every hit as an XA candidate when
/// there are at most `max_xa + 1` of them, else none.
pub fn xa_candidates(hits: &[AlnHit], max_xa: usize) -> Vec<OtherHit> {
    let n_occ: u64 = hits.iter().map(|h| h.l - h.k + 1).sum();
    if max_xa == 0 || n_occ > max_xa as u64 + 1 {
        return Vec::new();
    }
    let mut others = Vec::with_capacity(n_occ as usize);
    for h in hits {
        for row in h.k..=h.l {
            others.push(OtherHit {
                pos: row,
                reverse: false,
                gaps: h.n_gapo as u32 + h.n_gape as u32,
                mismatches: h.n_mm as u32,
                ref_shift: h.n_del as i64 - h.n_ins as i64,
                cigar: None,
            });
        }
    }
    others
}

/// bwa's g_log_n table: round(4.343 ln n), 0 for n = 0.
pub fn log_n(n: u64) -> i32 {
    if n == 0 {
        return 0;
    }
    (4.343 * (n as f64).ln() + 0.5) as i32
}

/// bwa_approx_mapQ.
pub fn approx_mapq(p: &Placement, max_diff: i32) -> u32 {
    if p.c1 == 0 {
        return 23;
    }
    if p.c1 > 1 {
        return 0;
    }
    if p.n_mm as i32 == max_diff {
        return 25;
    }
    if p.c2 == 0 {
        return 37;
    }
    let g = log_n(p.c2.min(255));
    if 23 < g {
        0
    } else {
        (23 - g) as u32
    }
}

/// bwa_sa2pos: forward position and strand of SA row `row` for a hit spanning `ref_len`
/// reference bases; `None` when it bridges the forward and reverse halves.
pub fn sa_to_pos(bwt: &Bwt, sa: &SuffixArray, l_pac: u64, row: u64, ref_len: i64) -> (Option<u64>, bool) {
    text_to_pos(sa.position(bwt, row), l_pac, ref_len)
}

/// The second half of bwa_sa2pos: from a position in the forward-reverse text.
pub fn text_to_pos(pos_f: u64, l_pac: u64, ref_len: i64) -> (Option<u64>, bool) {
    if pos_f < l_pac && (l_pac as i64) < pos_f as i64 + ref_len {
        return (None, false);
    }
    let is_rev = pos_f >= l_pac;
    let mut pos = if is_rev { 2 * l_pac - 1 - pos_f } else { pos_f };
    if is_rev {
        pos = if (pos as i64) + 1 < ref_len { 0 } else { (pos as i64 - ref_len + 1) as u64 };
    }
    // The read was searched as its reverse complement: a forward-text hit is a reverse-strand read.
    (Some(pos), !is_rev)
}

/// bwa_cal_pac_pos_core: strand, forward position and mapping quality of the chosen hit of a
/// read of `len` aligned bases; a hit bridging the two strands becomes unmapped. `text_pos`
/// gives an SA row's position in the text (called for mapped reads only).
pub fn place_main(p: &mut Placement, text_pos: impl FnOnce(u64) -> u64, l_pac: u64, len: usize, max_mm: i32, fnr: f32) {
    if !p.kind.is_mapped() {
        return;
    }
    let max_diff = if fnr > 0.0 { cal_maxdiff(len as i32, AVG_ERR, fnr as f64) } else { max_mm };
    let (pos, reverse) = text_to_pos(text_pos(p.sa), l_pac, len as i64 + p.ref_shift);
    p.reverse = reverse;
    p.mapq = approx_mapq(p, max_diff);
    p.se_mapq = p.mapq;
    match pos {
        Some(pos) => p.pos = pos,
        None => {
            p.pos = u64::MAX;
            p.kind = HitType::NoMatch;
        }
    }
}

/// The XA part of bwa_cal_pac_pos: candidates to positions, dropping the reported one and
/// those bridging the strands. `text_pos` gives an SA row's position in the text (the
/// suffix array, or rows already looked up).
pub fn place_others(p: &mut Placement, mut text_pos: impl FnMut(u64) -> u64, l_pac: u64, len: usize) {
    let main_pos = p.pos;
    let others = std::mem::take(&mut p.others);
    p.others = others
        .into_iter()
        .filter_map(|mut q| {
            let (pos, reverse) = text_to_pos(text_pos(q.pos), l_pac, len as i64 + q.ref_shift);
            q.reverse = reverse;
            let pos = pos?;
            q.pos = pos;
            (pos != main_pos).then_some(q)
        })
        .collect();
}

/// The next read's hits from a .sai, checked against this index: errors name the .sai and
/// the read (`record` counts from 1).
pub fn next_read_hits<R: std::io::Read>(
    sai: &mut SaiReader<R>,
    sai_path: &Path,
    read: &ReadRef<'_>,
    record: u64,
    reads_path: &Path,
    seq_len: u64,
) -> anyhow::Result<Vec<AlnHit>> {
    let Some(hits) = sai.next_read().with_context(|| format!("{}", sai_path.display()))? else {
        bail!(
            "{}: ends before read {record} ('{}') of {}: the .sai is for other reads",
            sai_path.display(),
            read.name,
            reads_path.display()
        );
    };
    // Row 0 is the `$` alone, which no read matches.
    if let Some(h) = hits.iter().find(|h| h.k == 0 || h.k > h.l || h.l > seq_len) {
        bail!(
            "{}: read {record} has the SA interval [{}, {}] outside this index (rows 1 to {seq_len}): the .sai is from another index",
            sai_path.display(),
            h.k,
            h.l
        );
    }
    Ok(hits)
}

/// After the last read: the .sai must be exhausted too.
pub fn check_sai_end<R: std::io::Read>(
    sai: &mut SaiReader<R>,
    sai_path: &Path,
    n_reads: u64,
    reads_path: &Path,
) -> anyhow::Result<()> {
    if sai.next_read().with_context(|| format!("{}", sai_path.display()))?.is_some() {
        bail!(
            "{}: has more records than the {n_reads} reads of {}: the .sai is for other reads",
            sai_path.display(),
            reads_path.display()
        );
    }
    Ok(())
}
