//! Where SAM records go: the header bwa prints (@SQ lines, the `-r` read group, our @PG),
//! then lines as SAM text or, for `-o x.bam`, as BAM encoded by noodles and compressed on
//! several threads; or, sorted, as BAM in coordinate order with its index beside it (`sort`).
//! Every file is written whole or not at all (the `output` crate).

use std::fmt::Write as _;
use std::io::Write;
use std::num::NonZero;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bcuda_index::RefSeqs;
use bcuda_output::Output;

use super::format::Format;
use super::sort::Sorter;

type BgzfWriter = noodles::bgzf::io::MultithreadedWriter<Output>;

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

/// SAM text, or BAM through noodles, or BAM records gathered for sorting.
#[allow(clippy::large_enum_variant)] // one sink per run: boxing the large variant would save nothing
pub enum Sink {
    Sam(Output),
    Bam { writer: noodles::bam::io::Writer<BgzfWriter>, header: noodles::sam::Header },
    Sorted(Box<SortedBam>),
}

/// A coordinate-sorted BAM on its way: records encoded, then sorted at the end.
pub struct SortedBam {
    path: PathBuf,
    header: noodles::sam::Header,
    /// Encodes one record at a time (uncompressed) for the sorter.
    encoder: noodles::bam::io::Writer<Vec<u8>>,
    sorter: Sorter,
    threads: NonZero<usize>,
}

/// Compression threads: those of the pool the caller runs in.
fn compression_threads() -> NonZero<usize> {
    NonZero::new(rayon::current_num_threads()).unwrap_or(NonZero::<usize>::MIN)
}

/// A BAM writer at `out`, its header written.
fn bam_writer(
    out: Output,
    header: &noodles::sam::Header,
    threads: NonZero<usize>,
) -> Result<noodles::bam::io::Writer<BgzfWriter>> {
    let mut writer = noodles::bam::io::Writer::from(BgzfWriter::with_worker_count(threads, out));
    writer.write_header(header)?;
    Ok(writer)
}

/// `x.bam` + `.bai`: `x.bam.bai`, as samtools names it.
fn beside(bam: &Path, ext: &str) -> PathBuf {
    let mut name = bam.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

impl Sink {
    /// Opens `path` (stdout when `None`) and writes the header.
    pub fn create(
        path: Option<&Path>,
        format: Format,
        refs: &RefSeqs,
        rg_line: Option<&str>,
        pg_line: &str,
    ) -> Result<Sink> {
        let header = header_text(refs, rg_line, pg_line);
        let out = Output::create(path)?;
        if format == Format::Bam {
            let header: noodles::sam::Header = header.parse().context("building the BAM header")?;
            Ok(Sink::Bam { writer: bam_writer(out, &header, compression_threads())?, header })
        } else {
            let mut out = out;
            out.write_all(header.as_bytes())?;
            Ok(Sink::Sam(out))
        }
    }

    /// A coordinate-sorted BAM at `path` (`@HD SO:coordinate` first in its header), with its
    /// index beside it (`.bai`, or `.csi` for references over 2^29 - 1 bases) once committed;
    /// about `memory` bytes of records are held before runs go to temporary files.
    pub fn create_sorted(
        path: &Path,
        refs: &RefSeqs,
        rg_line: Option<&str>,
        pg_line: &str,
        memory: usize,
    ) -> Result<Sink> {
        let text = format!("@HD\tVN:1.6\tSO:coordinate\n{}", header_text(refs, rg_line, pg_line));
        let header = text.parse().context("building the BAM header")?;
        // Created now, so that a path that cannot be written fails before the work.
        drop(Output::create(Some(path))?);
        let (encoder, sorter) = (noodles::bam::io::Writer::from(Vec::new()), Sorter::new(memory));
        Ok(Sink::Sorted(Box::new(SortedBam {
            path: path.to_path_buf(),
            header,
            encoder,
            sorter,
            threads: compression_threads(),
        })))
    }

    pub fn write_lines(&mut self, text: &str) -> Result<()> {
        use noodles::sam::alignment::io::Write as _;
        let parse = |line: &str| {
            noodles::sam::Record::try_from(line.as_bytes()).with_context(|| format!("encoding BAM: {line}"))
        };
        match self {
            Sink::Sam(out) => out.write_all(text.as_bytes())?,
            Sink::Bam { writer, header } => {
                for line in text.lines() {
                    writer.write_alignment_record(header, &parse(line)?)?;
                }
            }
            Sink::Sorted(sorted) => {
                for line in text.lines() {
                    sorted.encoder.write_alignment_record(&sorted.header, &parse(line)?)?;
                    sorted.sorter.push(sorted.encoder.get_ref())?;
                    sorted.encoder.get_mut().clear();
                }
            }
        }
        Ok(())
    }

    pub fn commit(self) -> Result<()> {
        match self {
            Sink::Sam(out) => out.commit()?,
            Sink::Bam { mut writer, .. } => writer.get_mut().finish()?.commit()?,
            Sink::Sorted(sorted) => (*sorted).commit()?,
        }
        Ok(())
    }
}

impl SortedBam {
    /// Writes the records in order, then the index from the BAM written.
    fn commit(self) -> Result<()> {
        let SortedBam { path, header, sorter, threads, .. } = self;
        let mut writer = bam_writer(Output::create(Some(&path))?, &header, threads)?;
        sorter.finish(writer.get_mut()).with_context(|| format!("{}: writing the sorted records", path.display()))?;
        writer.get_mut().finish()?.commit()?;
        // BAI while the longest reference fits its bins (2^29 - 1 bases), else CSI.
        let index = noodles::bam::fs::index(&path).with_context(|| format!("{}: indexing", path.display()))?;
        let index_path = beside(&path, if matches!(index, noodles::bam::Index::Bai(_)) { ".bai" } else { ".csi" });
        let mut out = Output::create(Some(&index_path))?;
        match &index {
            noodles::bam::Index::Bai(bai) => noodles::bam::bai::io::Writer::new(&mut out).write_index(bai)?,
            noodles::bam::Index::Csi(csi) => {
                let mut writer = noodles::csi::io::Writer::new(&mut out);
                writer.write_index(csi)?;
                writer.into_inner().finish()?;
            }
        }
        out.commit().with_context(|| format!("writing {}", index_path.display()))?;
        Ok(())
    }
}
