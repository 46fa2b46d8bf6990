//! `bcuda samse`: .sai to SAM/BAM, as `bwa samse` 0.7.17 writes it (same records apart from
//! the @PG line). SAM text is formatted here, field for field as bwa prints it; BAM is that
//! text parsed and encoded by noodles.

mod hits;
mod ksw;
mod refine;

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use bcuda_index::rand48::Rand48;
use bcuda_index::{Index, RefSeqs};
use rayon::prelude::*;

use crate::output::Output;
use crate::progress::Progress;
use crate::reads::{ReadBatchReader, ReadOptions, ReadSeq};
use crate::sai::{GapOptions, SaiReader, MODE_COMPREAD, MODE_IL13};
use hits::{HitType, Placement};

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda samse [OPTIONS] [INDEX] <SAI> <READS>")]
pub struct SamseArgs {
    /// [INDEX] SAI READS: the index prefix (the FASTA given to `index`; left out: the default
    /// index), the .sai written by `aln` for these reads, and the reads given to `aln`.
    #[arg(value_name = "ARGS", num_args = 2..=3, required = true)]
    pub inputs: Vec<PathBuf>,
    /// Maximum hits to output in XA for a read.
    #[arg(short = 'n', default_value_t = 3)]
    pub max_xa: usize,
    /// Read group header line such as '@RG\tID:foo\tSM:bar'.
    #[arg(short = 'r')]
    pub read_group: Option<String>,
    /// SAM output file (as bwa's -f) [stdout].
    #[arg(short = 'f')]
    pub sam_file: Option<PathBuf>,
    /// Output file: BAM when it ends in .bam, else SAM; written whole or not at all.
    #[arg(short = 'o', conflicts_with = "sam_file")]
    pub output: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// bwa_set_rg: the header line with `\t` escapes turned into tabs, and its ID.
fn read_group(line: &str) -> Result<(String, String)> {
    if !line.starts_with("@RG") {
        bail!("-r: the read group line does not start with @RG");
    }
    if line.contains('\t') {
        bail!("-r: the read group line contains literal tabs; write them as \\t");
    }
    let text = line.replace("\\t", "\t").replace("\\n", "\n").replace("\\\\", "\\");
    let Some(at) = text.find("\tID:") else { bail!("-r: no ID in the read group line") };
    let id: String = text[at + 4..].chars().take_while(|&c| c != '\t' && c != '\n').collect();
    Ok((text, id))
}

/// Header: @SQ of every sequence, the read group, our @PG.
fn header_text(refs: &RefSeqs, rg_line: Option<&str>) -> String {
    let mut h = String::new();
    for s in refs.seqs() {
        let _ = writeln!(h, "@SQ\tSN:{}\tLN:{}", s.name, s.len);
    }
    if let Some(rg) = rg_line {
        let _ = writeln!(h, "{rg}");
    }
    let cl: Vec<String> = std::env::args().collect();
    let _ = writeln!(h, "@PG\tID:bcuda\tPN:bcuda\tVN:{}\tCL:{}", env!("CARGO_PKG_VERSION"), cl.join(" "));
    h
}

/// Everything needed to print one read.
struct Aligned {
    place: Placement,
    cigar: Option<Vec<u32>>,
    md: Option<(String, u32)>,
}

fn revcomp(codes: &[u8]) -> Vec<u8> {
    codes.iter().rev().map(|&c| if c > 3 { 4 } else { 3 - c }).collect()
}

/// Positions, gapped CIGARs, MD and trimming for one read (bwa_cal_pac_pos + bwa_refine_gapped).
fn align_one(mut place: Placement, read: &ReadSeq, index: &Index, opt: &GapOptions) -> Aligned {
    let (bwt, sa, refs) = (&index.bwt, index.sa.as_ref().expect("samse loads the SA"), &index.refs);
    let (pac, l_pac) = (refs.pac(), refs.l_pac());
    hits::place(&mut place, bwt, sa, refs, read.len, opt.max_diff, opt.fnr);
    let forward = read.aligned();
    let reverse = revcomp(forward);
    let oriented = |rev: bool| if rev { &reverse[..] } else { forward };
    let full_len = read.codes.len();
    place.others.retain_mut(|q| {
        if q.gaps > 0 {
            q.cigar = refine::gapped_cigar(pac, l_pac, oriented(q.reverse), q.ref_shift, &mut q.pos);
            q.cigar.is_some()
        } else {
            true
        }
    });
    let mut cigar = None;
    if place.kind != HitType::NoMatch && place.n_gapo > 0 {
        cigar = refine::gapped_cigar(pac, l_pac, oriented(place.reverse), place.ref_shift, &mut place.pos);
        if cigar.is_none() {
            place.kind = HitType::NoMatch;
        }
    }
    let md = (place.kind != HitType::NoMatch)
        .then(|| refine::md_and_nm(cigar.as_deref(), read.len, place.pos, oriented(place.reverse), pac, l_pac));
    refine::restore_trimmed(&mut cigar, place.reverse, read.len, full_len);
    Aligned { place, cigar, md }
}

fn push_cigar(out: &mut String, cigar: &[u32]) {
    for &op in cigar {
        let _ = write!(out, "{}{}", op >> 4, b"MIDS"[(op & 0xf) as usize] as char);
    }
}

/// One SAM line, as bwa_print_sam1 prints it for a single-end read.
fn sam_line(read: &ReadSeq, a: &Aligned, refs: &RefSeqs, opt: &GapOptions, rg_id: Option<&str>, out: &mut String) {
    let p = &a.place;
    let full_len = read.codes.len();
    let mapped = p.kind != HitType::NoMatch;
    let (mut flag, mut nn) = (0u32, 0u64);
    if mapped {
        let span = refine::ref_span(a.cigar.as_deref(), full_len);
        let (n, id) = refs.count_ambiguous(p.pos, span);
        nn = n;
        let s = &refs.seqs()[id.unwrap_or(0)];
        if p.pos + span - s.offset > s.len {
            flag |= 4; // bridges two reference sequences
        }
        if p.reverse {
            flag |= 16;
        }
        let _ = write!(out, "{}\t{}\t{}\t{}\t{}\t", read.name, flag, s.name, p.pos - s.offset + 1, p.mapq);
        match &a.cigar {
            Some(c) => push_cigar(out, c),
            None => {
                let _ = write!(out, "{full_len}M");
            }
        }
        out.push_str("\t*\t0\t0\t");
    } else {
        let _ = write!(out, "{}\t4\t*\t0\t0\t*\t*\t0\t0\t", read.name);
    }
    if p.reverse {
        out.extend(read.codes.iter().rev().map(|&c| b"TGCAN"[c as usize] as char));
    } else {
        out.extend(read.codes.iter().map(|&c| b"ACGTN"[c as usize] as char));
    }
    out.push('\t');
    if read.qual.is_empty() {
        out.push('*');
    } else if p.reverse {
        out.extend(read.qual.iter().rev().map(|&q| q as char));
    } else {
        out.extend(read.qual.iter().map(|&q| q as char));
    }
    if let Some(id) = rg_id {
        let _ = write!(out, "\tRG:Z:{id}");
    }
    if read.len < full_len {
        let _ = write!(out, "\tXC:i:{}", read.len);
    }
    if mapped {
        let mut xt = if p.kind == HitType::Repeat { 'R' } else { 'U' };
        if nn > 10 {
            xt = 'N';
        }
        let (md, nm) = a.md.as_ref().expect("mapped reads have an MD");
        let _ = write!(out, "\tXT:A:{xt}\t{}:i:{nm}", if opt.mode & MODE_COMPREAD != 0 { "NM" } else { "CM" });
        if nn > 0 {
            let _ = write!(out, "\tXN:i:{nn}");
        }
        let (c1, c2) = (p.c1 & 0xfff_ffff, p.c2 & 0xfff_ffff);
        let _ = write!(out, "\tX0:i:{c1}");
        if c1 <= opt.max_top2 as u64 {
            let _ = write!(out, "\tX1:i:{c2}");
        }
        let _ = write!(out, "\tXM:i:{}\tXO:i:{}\tXG:i:{}\tMD:Z:{md}", p.n_mm, p.n_gapo, p.n_gapo + p.n_gape);
        if !p.others.is_empty() {
            out.push_str("\tXA:Z:");
            for q in &p.others {
                let span = refine::ref_span(q.cigar.as_deref(), full_len);
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
    out.push('\n');
}

/// Where SAM lines go: text, or BAM through noodles.
enum Sink {
    Sam(Output),
    Bam { writer: noodles::bam::io::Writer<noodles::bgzf::io::Writer<Output>>, header: noodles::sam::Header },
}

impl Sink {
    fn write_lines(&mut self, text: &str) -> Result<()> {
        match self {
            Sink::Sam(out) => out.write_all(text.as_bytes())?,
            Sink::Bam { writer, header } => {
                use noodles::sam::alignment::io::Write as _;
                for line in text.lines() {
                    let record = noodles::sam::Record::try_from(line.as_bytes()).with_context(|| format!("encoding BAM: {line}"))?;
                    writer.write_alignment_record(header, &record)?;
                }
            }
        }
        Ok(())
    }

    fn commit(self) -> Result<()> {
        match self {
            Sink::Sam(out) => out.commit()?,
            Sink::Bam { writer, .. } => writer.into_inner().finish()?.commit()?,
        }
        Ok(())
    }
}

/// Reads per batch: bwa samse's (0x40000).
const BATCH: usize = 0x40000;

pub fn run(args: SamseArgs) -> Result<()> {
    let (choice, inputs) = crate::default_index::split_positional("samse", &args.inputs, &["reads.sai", "reads.fq"])?;
    choice.announce("samse", args.quiet);
    let (sai_path, reads_path) = (&inputs[0], &inputs[1]);
    let index = Index::load(&choice.prefix, true)?;
    let file = std::fs::File::open(sai_path).with_context(|| format!("{}", sai_path.display()))?;
    let mut sai = SaiReader::new(std::io::BufReader::with_capacity(1 << 20, file)).with_context(|| format!("{}", sai_path.display()))?;
    let opt = sai.options;
    let rg = args.read_group.as_deref().map(read_group).transpose()?;
    let header = header_text(&index.refs, rg.as_ref().map(|(line, _)| line.as_str()));
    let rg_id = rg.as_ref().map(|(_, id)| id.as_str());

    let out_path = args.output.as_ref().or(args.sam_file.as_ref());
    let out = Output::create(out_path.map(|p| p.as_path()))?;
    let is_bam = args.output.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "bam"));
    let mut sink = if is_bam {
        let header_parsed: noodles::sam::Header = header.parse().context("building the BAM header")?;
        let mut writer = noodles::bam::io::Writer::new(out);
        writer.write_header(&header_parsed)?;
        Sink::Bam { writer, header: header_parsed }
    } else {
        let mut out = out;
        out.write_all(header.as_bytes())?;
        Sink::Sam(out)
    };

    let read_opts = ReadOptions { trim_qual: opt.trim_qual, illumina13: opt.mode & MODE_IL13 != 0, sequence_only: false };
    let mut reader = ReadBatchReader::open(reads_path, read_opts)?;
    let mut rng = Rand48::new(index.refs.seed() as i64);
    let seq_len = index.bwt.seq_len();
    let progress = Progress::new("reads", Some(reader.position().1), args.quiet);
    loop {
        let batch = reader.next_batch(BATCH)?;
        if batch.is_empty() {
            break;
        }
        let mut chosen = Vec::with_capacity(batch.len());
        for (i, read) in batch.iter().enumerate() {
            let record = reader.records() - batch.len() as u64 + i as u64 + 1;
            let Some(hits) = sai.next_read().with_context(|| format!("{}", sai_path.display()))? else {
                bail!("{}: ends before read {record} ('{}') of {}: the .sai is for other reads", sai_path.display(), read.name, reads_path.display());
            };
            if let Some(h) = hits.iter().find(|h| h.k > h.l || h.l > seq_len) {
                bail!("{}: read {record} has the SA interval [{}, {}] beyond this index (length {seq_len}): the .sai is from another index", sai_path.display(), h.k, h.l);
            }
            chosen.push(hits::choose(&hits, &mut rng, args.max_xa));
        }
        let lines: Vec<String> = chosen
            .into_par_iter()
            .zip(batch.par_iter())
            .with_min_len(256)
            .map(|(place, read)| {
                let aligned = align_one(place, read, &index, &opt);
                let mut line = String::with_capacity(2 * read.codes.len() + 128);
                sam_line(read, &aligned, &index.refs, &opt, rg_id, &mut line);
                line
            })
            .collect();
        sink.write_lines(&lines.concat())?;
        progress.advance(batch.len() as u64, Some(reader.position().0));
    }
    if sai.next_read().with_context(|| format!("{}", sai_path.display()))?.is_some() {
        bail!("{}: has more records than the {} reads of {}: the .sai is for other reads", sai_path.display(), reader.records(), reads_path.display());
    }
    progress.finish();
    sink.commit()
}
