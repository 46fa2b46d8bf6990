//! Gapped hits get their CIGAR from a banded global alignment against the reference; every
//! mapped read gets its MD string and edit distance (bwa_refine_gapped, bwa_cal_md1).

use bcuda_index::refseqs::pac_base;

use super::hits::{HitType, Placement};
use super::ksw::{self, OP_D, OP_I, OP_M, OP_S};
use crate::reads::ReadRef;

/// A read ready to print: its placement, CIGAR (None = `<len>M`) and MD/NM.
pub struct Aligned {
    pub place: Placement,
    pub cigar: Option<Vec<u32>>,
    pub md: Option<(String, u32)>,
}

pub fn revcomp(codes: &[u8]) -> Vec<u8> {
    codes.iter().rev().map(|&c| if c > 3 { 4 } else { 3 - c }).collect()
}

/// bwa_refine_gapped for one placed read: CIGARs of gapped XA hits (those that fail are
/// dropped) and of a gapped reported hit, MD and NM, and the `-q` tail restored as a soft
/// clip. `cigar` is one already known (sampe's mate rescue), kept as it is.
pub fn refine(
    mut place: Placement,
    mut cigar: Option<Vec<u32>>,
    read: &ReadRef<'_>,
    pac: &[u8],
    l_pac: u64,
) -> Aligned {
    let forward = read.aligned();
    let reverse = revcomp(forward);
    let oriented = |rev: bool| if rev { &reverse[..] } else { forward };
    place.others.retain_mut(|q| {
        if q.gaps > 0 {
            q.cigar = gapped_cigar(pac, l_pac, oriented(q.reverse), q.ref_shift, &mut q.pos);
            q.cigar.is_some()
        } else {
            true
        }
    });
    if matches!(place.kind, HitType::Unique | HitType::Repeat) && place.n_gapo > 0 {
        cigar = gapped_cigar(pac, l_pac, oriented(place.reverse), place.ref_shift, &mut place.pos);
        if cigar.is_none() {
            place.kind = HitType::NoMatch;
        }
    }
    let md = place
        .kind
        .is_mapped()
        .then(|| md_and_nm(cigar.as_deref(), read.len, place.pos, oriented(place.reverse), pac, l_pac));
    restore_trimmed(&mut cigar, place.reverse, read.len, read.codes.len());
    Aligned { place, cigar, md }
}

/// bwa's SW_BW: the least band width.
const MIN_BAND: i32 = 50;

/// bwa_refine_gapped_core: CIGAR of `query` (reference orientation) placed at `*pos` over
/// `query.len() + ref_shift` reference bases. Leading/trailing insertions become soft clips,
/// leading/trailing deletions are dropped (a leading one moves `*pos`). `None` if the hit runs
/// past the forward reference (bwa asserts there).
pub fn gapped_cigar(pac: &[u8], l_pac: u64, query: &[u8], ref_shift: i64, pos: &mut u64) -> Option<Vec<u32>> {
    let end = *pos as i64 + query.len() as i64 + ref_shift;
    if end > l_pac as i64 || end < *pos as i64 {
        return None;
    }
    let target: Vec<u8> = (*pos..end as u64).map(|p| pac_base(pac, p)).collect();
    let w = ((target.len() as i64 - query.len() as i64).abs() as f64 * 1.5) as i32;
    let (_, mut cigar) = ksw::global(query, &target, &ksw::score_matrix(1, 3), 5, 1, MIN_BAND.max(w));
    if cigar.is_empty() {
        return None;
    }
    let last = cigar.len() - 1;
    if cigar[last] & 0xf == OP_I {
        cigar[last] = cigar[last] >> 4 << 4 | OP_S;
    }
    if cigar[0] & 0xf == OP_I {
        cigar[0] = cigar[0] >> 4 << 4 | OP_S;
    }
    if cigar[cigar.len() - 1] & 0xf == OP_D {
        cigar.pop();
    }
    if cigar.first().is_some_and(|c| c & 0xf == OP_D) {
        *pos += (cigar[0] >> 4) as u64;
        cigar.remove(0);
    }
    Some(cigar)
}

/// bwa_cal_md1: the MD string and NM of `seq` (reference orientation, first `len` bases
/// aligned) at `pos`, following `cigar` or matching straight through without one.
pub fn md_and_nm(cigar: Option<&[u32]>, len: usize, pos: u64, seq: &[u8], pac: &[u8], l_pac: u64) -> (String, u32) {
    let mut md = String::new();
    let (mut nm, mut run) = (0u32, 0u32);
    let (mut x, mut y) = (pos, 0usize);
    let matches = |x: u64, y: usize, n: usize, md: &mut String, run: &mut u32, nm: &mut u32| {
        for z in 0..n {
            if x + z as u64 >= l_pac {
                break;
            }
            let c = pac_base(pac, x + z as u64);
            if seq[y + z] > 3 || c != seq[y + z] {
                md.push_str(&run.to_string());
                md.push(b"ACGTN"[c as usize] as char);
                *nm += 1;
                *run = 0;
            } else {
                *run += 1;
            }
        }
    };
    match cigar {
        Some(cigar) => {
            for &op in cigar {
                let n = (op >> 4) as usize;
                match op & 0xf {
                    OP_M => {
                        matches(x, y, n, &mut md, &mut run, &mut nm);
                        x += n as u64;
                        y += n;
                    }
                    OP_I | OP_S => {
                        y += n;
                        if op & 0xf == OP_I {
                            nm += n as u32;
                        }
                    }
                    OP_D => {
                        md.push_str(&run.to_string());
                        md.push('^');
                        for z in 0..n as u64 {
                            if x + z >= l_pac {
                                break;
                            }
                            md.push(b"ACGT"[pac_base(pac, x + z) as usize] as char);
                        }
                        run = 0;
                        x += n as u64;
                        nm += n as u32;
                    }
                    _ => {}
                }
            }
        }
        None => matches(x, y, len, &mut md, &mut run, &mut nm),
    }
    md.push_str(&run.to_string());
    (md, nm)
}

/// bwa_correct_trimmed: a read trimmed by `-q` gets its clipped tail back as a soft clip.
pub fn restore_trimmed(cigar: &mut Option<Vec<u32>>, reverse: bool, len: usize, full_len: usize) {
    if len == full_len {
        return;
    }
    let clip = (full_len - len) as u32;
    let c = cigar.get_or_insert_with(|| vec![(len as u32) << 4 | OP_M]);
    if !reverse {
        match c.last_mut() {
            Some(last) if *last & 0xf == OP_S => *last += clip << 4,
            _ => c.push(clip << 4 | OP_S),
        }
    } else {
        match c.first_mut() {
            Some(first) if *first & 0xf == OP_S => *first += clip << 4,
            _ => c.insert(0, clip << 4 | OP_S),
        }
    }
}

/// Reference bases covered by an alignment (pos_end - pos).
pub fn ref_span(cigar: Option<&[u32]>, len: usize) -> u64 {
    match cigar {
        Some(c) => c.iter().filter(|&&op| matches!(op & 0xf, OP_M | OP_D)).map(|&op| (op >> 4) as u64).sum(),
        None => len as u64,
    }
}
