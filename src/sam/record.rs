//! One SAM line per read, field for field and tag for tag as bwa_print_sam1 prints it, for a
//! single read (`samse`) or one end of a pair (`sampe`, with its mate's fields and SM/AM).

use std::fmt::Write as _;

use bcuda_index::RefSeqs;

use super::hits::HitType;
use super::refine::{ref_span, Aligned};
use crate::reads::ReadRef;
use crate::sai::{GapOptions, MODE_COMPREAD};

/// SAM flag bits that bwa sets.
pub const FLAG_PAIRED: u32 = 0x1;
pub const FLAG_PROPER_PAIR: u32 = 0x2;
pub const FLAG_UNMAPPED: u32 = 0x4;
pub const FLAG_MATE_UNMAPPED: u32 = 0x8;
pub const FLAG_REVERSE: u32 = 0x10;
pub const FLAG_MATE_REVERSE: u32 = 0x20;
pub const FLAG_READ1: u32 = 0x40;
pub const FLAG_READ2: u32 = 0x80;

/// What a line needs from the other end of a pair.
pub struct Mate<'a> {
    pub aligned: &'a Aligned,
    /// Its whole length (bwa's mate->len once trimming is restored).
    pub full_len: usize,
}

pub fn push_cigar(out: &mut String, cigar: &[u32]) {
    for &op in cigar {
        let _ = write!(out, "{}{}", op >> 4, b"MIDS"[(op & 0xf) as usize] as char);
    }
}

/// bwa's pos_5: the 5' end of a mapped read.
fn five_prime(a: &Aligned, full_len: usize) -> i64 {
    let p = &a.place;
    if p.reverse {
        (p.pos + ref_span(a.cigar.as_deref(), full_len)) as i64
    } else {
        p.pos as i64
    }
}

fn push_seq_qual(read: &ReadRef<'_>, reverse: bool, out: &mut String) {
    if reverse {
        out.extend(read.codes.iter().rev().map(|&c| b"TGCAN"[c as usize] as char));
    } else {
        out.extend(read.codes.iter().map(|&c| b"ACGTN"[c as usize] as char));
    }
    out.push('\t');
    if read.qual.is_empty() {
        out.push('*');
    } else if reverse {
        out.extend(read.qual.iter().rev().map(|&q| q as char));
    } else {
        out.extend(read.qual.iter().map(|&q| q as char));
    }
}

/// Appends the SAM line of `read`; `mate` is the other end for `sampe`, `None` for `samse`.
pub fn push_record(
    read: &ReadRef<'_>,
    a: &Aligned,
    mate: Option<&Mate>,
    refs: &RefSeqs,
    opt: &GapOptions,
    rg_id: Option<&str>,
    out: &mut String,
) {
    let p = &a.place;
    let full_len = read.codes.len();
    let mapped = p.kind.is_mapped();
    let mate_mapped = mate.is_some_and(|m| m.aligned.place.kind.is_mapped());
    let push_common_tags = |out: &mut String| {
        if let Some(id) = rg_id {
            let _ = write!(out, "\tRG:Z:{id}");
        }
        if read.len < full_len {
            let _ = write!(out, "\tXC:i:{}", read.len);
        }
    };
    if !mapped && !mate_mapped {
        let mut flag = p.flags | FLAG_UNMAPPED;
        if mate.is_some() {
            flag |= FLAG_MATE_UNMAPPED;
        }
        let _ = write!(out, "{}\t{flag}\t*\t0\t0\t*\t*\t0\t0\t", read.name);
        push_seq_qual(read, p.reverse, out);
        push_common_tags(out);
        out.push('\n');
        return;
    }

    let mut flag = p.flags;
    // An unmapped read with a mapped mate is printed at its mate's position and strand.
    let (pos, reverse, span) = if mapped {
        (p.pos, p.reverse, ref_span(a.cigar.as_deref(), full_len))
    } else {
        let m = &mate.expect("mate is mapped").aligned.place;
        flag |= FLAG_UNMAPPED;
        (m.pos, m.reverse, 1)
    };
    let (nn, id) = refs.count_ambiguous(pos, span);
    let seq_id = id.unwrap_or(0);
    let s = &refs.seqs()[seq_id];
    if mapped && pos + span - s.offset > s.len {
        flag |= FLAG_UNMAPPED; // bridges two reference sequences
    }
    if reverse {
        flag |= FLAG_REVERSE;
    }
    if let Some(m) = mate {
        if mate_mapped {
            if m.aligned.place.reverse {
                flag |= FLAG_MATE_REVERSE;
            }
        } else {
            flag |= FLAG_MATE_UNMAPPED;
        }
    }
    let _ = write!(out, "{}\t{}\t{}\t{}\t{}\t", read.name, flag, s.name, pos - s.offset + 1, p.mapq);
    match &a.cigar {
        Some(c) => push_cigar(out, c),
        None if !mapped => out.push('*'),
        None => {
            let _ = write!(out, "{full_len}M");
        }
    }
    let mut mate_se_mapq = 0;
    match mate {
        Some(m) if mate_mapped => {
            let mp = &m.aligned.place;
            mate_se_mapq = mp.se_mapq.min(p.se_mapq);
            let (_, m_id) = refs.count_ambiguous(mp.pos, m.full_len as u64);
            let m_id = m_id.unwrap_or(0);
            let same = m_id == seq_id;
            let isize = if same && mapped { five_prime(m.aligned, m.full_len) - five_prime(a, full_len) } else { 0 };
            let ms = &refs.seqs()[m_id];
            let _ =
                write!(out, "\t{}\t{}\t{isize}\t", if same { "=" } else { ms.name.as_str() }, mp.pos - ms.offset + 1);
        }
        Some(_) => {
            let _ = write!(out, "\t=\t{}\t0\t", pos - s.offset + 1);
        }
        None => out.push_str("\t*\t0\t0\t"),
    }
    push_seq_qual(read, reverse, out);
    push_common_tags(out);
    if mapped {
        push_aligned_tags(a, nn, mate.map(|_| mate_se_mapq), refs, opt, full_len, out);
    }
    out.push('\n');
}

/// The tags of a mapped read after RG and XC: XT, NM (CM in colour space), XN, SM and AM
/// (`mate_se_mapq` is `Some` for an end of a pair), X0 and X1, XM, XO, XG, MD and XA.
fn push_aligned_tags(
    a: &Aligned,
    nn: u64,
    mate_se_mapq: Option<u32>,
    refs: &RefSeqs,
    opt: &GapOptions,
    full_len: usize,
    out: &mut String,
) {
    let p = &a.place;
    let xt = if nn > 10 {
        'N'
    } else {
        match p.kind {
            HitType::Repeat => 'R',
            HitType::MateRescued => 'M',
            _ => 'U',
        }
    };
    let (md, nm) = a.md.as_ref().expect("mapped reads have an MD");
    let _ = write!(out, "\tXT:A:{xt}\t{}:i:{nm}", if opt.mode & MODE_COMPREAD != 0 { "NM" } else { "CM" });
    if nn > 0 {
        let _ = write!(out, "\tXN:i:{nn}");
    }
    if let Some(mate_se_mapq) = mate_se_mapq {
        let _ = write!(out, "\tSM:i:{}\tAM:i:{mate_se_mapq}", p.se_mapq);
    }
    if p.kind != HitType::MateRescued {
        let (c1, c2) = (p.c1 & 0xfff_ffff, p.c2 & 0xfff_ffff);
        let _ = write!(out, "\tX0:i:{c1}");
        if c1 <= opt.max_top2 as u64 {
            let _ = write!(out, "\tX1:i:{c2}");
        }
    }
    let _ = write!(out, "\tXM:i:{}\tXO:i:{}\tXG:i:{}\tMD:Z:{md}", p.n_mm, p.n_gapo, p.n_gapo + p.n_gape);
    if !p.others.is_empty() {
        out.push_str("\tXA:Z:");
        for q in &p.others {
            let span = ref_span(q.cigar.as_deref(), full_len);
            let (_, id) = refs.count_ambiguous(q.pos, span);
            let s = &refs.seqs()[id.unwrap_or(0)];
            let _ = write!(out, "{},{}{},", s.name, if q.reverse { '-' } else { '+' }, q.pos - s.offset + 1);
            match &q.cigar {
                Some(c) => push_cigar(out, c),
                None => {
                    let _ = write!(out, "{full_len}M");
                }
            }
            let _ = write!(out, ",{};", q.gaps + q.mismatches);
        }
    }
}
