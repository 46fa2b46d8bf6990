//! `bcuda split-reads`: cuts a read file into consecutive shards on record boundaries, for
//! aligning the pieces apart (on other GPUs or nodes) and joining their `.sai` files with
//! `bcuda merge-sai`. Order is kept: shard 1 holds the first reads, the last shard the last,
//! so the merged `.sai` is that of the whole file. (`seqkit split2 -p` deals reads out in
//! turn, which would not merge back; `split -l` cuts plain FASTQ only.)

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bcuda_output::Output;
use flate2::write::GzEncoder;
use needletail::parser::FastxReader;

use crate::reads::ReadsError;

#[derive(clap::Args, Debug)]
pub struct SplitReadsArgs {
    /// Reads: FASTQ or FASTA, plain or gzip (`-`: standard input, copied to a temporary
    /// file first, since the reads are read twice).
    pub reads: PathBuf,
    /// One output file per shard, in order; a name ending in .gz is gzip-compressed.
    /// The reads are dealt as evenly as possible (shard sizes differ by one read at most).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// No summary on stderr.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: SplitReadsArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("split-reads");
    let sizes = split(&args.reads, &args.shards)?;
    summary.print(None, sizes.iter().sum(), "reads", args.quiet);
    Ok(())
}

/// Writes consecutive runs of the records of `reads` to `shards`; returns the reads per
/// shard. The file is read twice: once to count its records, once to copy them. Every shard
/// is written whole or not at all.
pub fn split(reads_path: &Path, shards: &[PathBuf]) -> Result<Vec<u64>> {
    if let Some(dup) = shards.iter().enumerate().find_map(|(i, s)| shards[..i].contains(s).then_some(s)) {
        bail!("{}: named twice as a shard", dup.display());
    }
    if shards.iter().any(|s| same_file(s, reads_path)) {
        bail!("{}: a shard would overwrite the reads", reads_path.display());
    }
    let gzipped: Vec<bool> = shards.iter().map(|s| gzipped(s)).collect::<Result<_>>()?;
    let source = Source::open(reads_path)?;
    let reads = source.name.as_path();
    let total = count_records(&source)?;
    let n = shards.len() as u64;
    if total < n {
        bail!("{}: {total} reads, fewer than the {n} shards asked for (a shard may not be empty)", reads.display());
    }
    // Shard i takes records [i*total/n, (i+1)*total/n).
    let sizes: Vec<u64> = (0..n).map(|i| (i + 1) * total / n - i * total / n).collect();

    let mut parser = source.parser()?;
    let mut record_no = 0u64;
    let mut written = Vec::with_capacity(shards.len());
    let mut record = Vec::new();
    for ((shard, &size), &gzip) in shards.iter().zip(&sizes).zip(&gzipped) {
        let mut out = ShardWriter::create(shard, gzip)?;
        for _ in 0..size {
            record_no += 1;
            let rec = parser.next().with_context(|| {
                format!("{}: ended before record {record_no} on the second reading", reads.display())
            })?;
            let rec = rec.map_err(|e| parse_error(reads, record_no, e))?;
            // Through a buffer: needletail's errors keep only the text of an io::Error.
            record.clear();
            rec.write(&mut record, None).expect("writing to memory");
            out.write_all(&record)?;
        }
        written.push(out);
    }
    for out in written {
        out.commit()?;
    }
    Ok(sizes)
}

/// The reads, read twice: a file, or standard input copied to a temporary file.
struct Source {
    path: PathBuf,
    spooled: Option<std::fs::File>,
    /// The name in messages.
    name: PathBuf,
}

impl Source {
    fn open(path: &Path) -> Result<Source> {
        let spooled = crate::input::is_stdin(path).then(crate::input::spool_stdin).transpose()?;
        Ok(Source { path: path.to_path_buf(), spooled, name: crate::input::display_name(path) })
    }

    /// A parser from the first record.
    fn parser(&self) -> Result<Box<dyn FastxReader>> {
        let parsed = match &self.spooled {
            None => needletail::parse_fastx_file(&self.path),
            Some(file) => {
                use std::io::{Seek, SeekFrom};
                let mut copy =
                    file.try_clone().with_context(|| format!("{}: the temporary copy", self.name.display()))?;
                copy.seek(SeekFrom::Start(0))
                    .with_context(|| format!("{}: the temporary copy", self.name.display()))?;
                needletail::parse_fastx_reader(copy)
            }
        };
        let reads = &self.name;
        parsed.map_err(|e| match e.kind {
            needletail::errors::ParseErrorKind::EmptyFile => ReadsError::Empty { path: reads.to_path_buf() }.into(),
            needletail::errors::ParseErrorKind::Io => anyhow::anyhow!("{}: {e}", reads.display()),
            _ => parse_error(reads, 1, e),
        })
    }
}

fn count_records(source: &Source) -> Result<u64> {
    let mut parser = source.parser()?;
    let mut n = 0;
    while let Some(rec) = parser.next() {
        n += 1;
        rec.map_err(|e| parse_error(&source.name, n, e))?;
    }
    Ok(n)
}

fn parse_error(reads: &Path, record: u64, e: needletail::errors::ParseError) -> anyhow::Error {
    ReadsError::Parse { path: reads.to_path_buf(), record, msg: e.to_string() }.into()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether a shard is gzip-compressed: its name ends in `.gz`, in any case. Other compressed
/// names are refused rather than written plain.
fn gzipped(shard: &Path) -> Result<bool> {
    let ext = shard.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("gz") => Ok(true),
        Some("bgz" | "bz2" | "xz" | "zst") => {
            bail!("{}: shards are written plain or gzip-compressed (.gz), not in this compression", shard.display())
        }
        _ => Ok(false),
    }
}

/// A shard's output: plain or gzip.
enum ShardWriter {
    Plain(Output),
    Gzip(Box<GzEncoder<Output>>),
}

impl ShardWriter {
    fn create(path: &Path, gzip: bool) -> Result<ShardWriter> {
        let out = Output::create(Some(path))?;
        Ok(if gzip {
            // Shards are short-lived: fast compression keeps the split from limiting the run.
            ShardWriter::Gzip(Box::new(GzEncoder::new(out, flate2::Compression::fast())))
        } else {
            ShardWriter::Plain(out)
        })
    }

    fn commit(self) -> std::io::Result<()> {
        match self {
            ShardWriter::Plain(out) => out.commit(),
            ShardWriter::Gzip(gz) => gz.finish()?.commit(),
        }
    }
}

impl Write for ShardWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            ShardWriter::Plain(out) => out.write(buf),
            ShardWriter::Gzip(gz) => gz.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            ShardWriter::Plain(out) => out.flush(),
            ShardWriter::Gzip(gz) => gz.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn fastq(n: usize) -> String {
        (1..=n).map(|i| format!("@r{i} comment\nACGTN\n+\nIIII#\n")).collect()
    }

    #[test]
    fn shards_are_consecutive_and_even() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("r.fq");
        std::fs::write(&reads, fastq(10)).unwrap();
        let shards: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("s{i}.fq"))).collect();
        assert_eq!(split(&reads, &shards).unwrap(), vec![3, 3, 4]);
        let joined: String = shards.iter().map(|s| std::fs::read_to_string(s).unwrap()).collect();
        assert_eq!(joined, fastq(10));
    }

    #[test]
    fn gzip_in_and_out() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("r.fq.gz");
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(fastq(5).as_bytes()).unwrap();
        std::fs::write(&reads, gz.finish().unwrap()).unwrap();
        let shards = vec![dir.path().join("a.fq.gz"), dir.path().join("b.fq")];
        assert_eq!(split(&reads, &shards).unwrap(), vec![2, 3]);
        let mut first = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&shards[0]).unwrap()).read_to_string(&mut first).unwrap();
        assert_eq!(first + &std::fs::read_to_string(&shards[1]).unwrap(), fastq(5));
    }

    #[test]
    fn gzip_names_in_any_case_and_no_other_compression() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("r.fq");
        std::fs::write(&reads, fastq(2)).unwrap();
        let shards = vec![dir.path().join("a.FQ.GZ"), dir.path().join("b.fq")];
        split(&reads, &shards).unwrap();
        assert_eq!(&std::fs::read(&shards[0]).unwrap()[..2], [0x1f, 0x8b]);
        let err = format!("{:#}", split(&reads, &[dir.path().join("c.fq.zst"), dir.path().join("d.fq")]).unwrap_err());
        assert!(err.contains("c.fq.zst: shards are written plain or gzip"), "{err}");
        assert!(!dir.path().join("d.fq").exists());
    }

    #[test]
    fn fasta_keeps_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("r.fa");
        std::fs::write(&reads, ">a\nACGT\n>b\nGGCC\n").unwrap();
        let shards = vec![dir.path().join("a.fa"), dir.path().join("b.fa")];
        split(&reads, &shards).unwrap();
        assert_eq!(std::fs::read_to_string(&shards[1]).unwrap(), ">b\nGGCC\n");
    }

    #[test]
    fn refusals_leave_no_shard() {
        let dir = tempfile::tempdir().unwrap();
        let reads = dir.path().join("r.fq");
        std::fs::write(&reads, fastq(2)).unwrap();
        let three: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("s{i}.fq"))).collect();
        let err = format!("{:#}", split(&reads, &three).unwrap_err());
        assert!(err.contains("2 reads, fewer than the 3 shards"), "{err}");
        let err = format!("{:#}", split(&reads, &[three[0].clone(), three[0].clone()]).unwrap_err());
        assert!(err.contains("named twice"), "{err}");
        let err = format!("{:#}", split(&reads, std::slice::from_ref(&reads)).unwrap_err());
        assert!(err.contains("would overwrite the reads"), "{err}");
        std::fs::write(&reads, "@r1\nACGT\n+\nII\n").unwrap();
        let err = format!("{:#}", split(&reads, &three[..1]).unwrap_err());
        assert!(err.contains("r.fq: record 1"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
