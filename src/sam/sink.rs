//! Where SAM records go: the header bwa prints (@SQ lines, the `-r` read group, our @PG),
//! then lines as SAM text or, for `-o x.bam`, as BAM encoded by noodles. The file is written
//! whole or not at all (src/output.rs).

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use bcuda_index::RefSeqs;
use bcuda_output::Output;

use super::format::Format;

/// bwa_set_rg: the header line with `\t` escapes turned into tabs, and its ID.
pub fn read_group(line: &str) -> Result<(String, String)> {
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
fn header_text(refs: &RefSeqs, rg_line: Option<&str>, pg_line: &str) -> String {
    let mut h = String::new();
    for s in refs.seqs() {
        let _ = writeln!(h, "@SQ\tSN:{}\tLN:{}", s.name, s.len);
    }
    if let Some(rg) = rg_line {
        let _ = writeln!(h, "{rg}");
    }
    let _ = writeln!(h, "{pg_line}");
    h
}

/// SAM text, or BAM through noodles.
pub enum Sink {
    Sam(Output),
    Bam { writer: noodles::bam::io::Writer<noodles::bgzf::io::Writer<Output>>, header: noodles::sam::Header },
}

impl Sink {
    /// Opens `path` (stdout when `None`) and writes the header.
    pub fn create(path: Option<&Path>, format: Format, refs: &RefSeqs, rg_line: Option<&str>, pg_line: &str) -> Result<Sink> {
        let header = header_text(refs, rg_line, pg_line);
        let out = Output::create(path)?;
        if format == Format::Bam {
            let header_parsed: noodles::sam::Header = header.parse().context("building the BAM header")?;
            let mut writer = noodles::bam::io::Writer::new(out);
            writer.write_header(&header_parsed)?;
            Ok(Sink::Bam { writer, header: header_parsed })
        } else {
            let mut out = out;
            out.write_all(header.as_bytes())?;
            Ok(Sink::Sam(out))
        }
    }

    pub fn write_lines(&mut self, text: &str) -> Result<()> {
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

    pub fn commit(self) -> Result<()> {
        match self {
            Sink::Sam(out) => out.commit()?,
            Sink::Bam { writer, .. } => writer.into_inner().finish()?.commit()?,
        }
        Ok(())
    }
}
