//! `bcuda merge-sai`: one `.sai` from the `.sai` files of consecutive shards of a read file
//! (BarraCUDA's multi-GPU recipe: split the reads, one `aln` per piece, concatenate).
//!
//! The shards must have been aligned with the same options: their headers are compared
//! field by field, and the merged file keeps the first shard's header followed by every
//! shard's read records in the order given, copied byte for byte. Shards in input order then
//! give the same file as one `aln` over the whole read file. (Splitting moves bwa's batch
//! boundaries, and bwa aln clips max_gapo to the difference bound of a batch's longest read;
//! but each read's own bound, never larger, limits its gap opens and scores anyway, so a
//! read's hits do not depend on its batch.)

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bcuda_output::Output;

use crate::sai::{self, GapOptions, SaiError, SaiReader};

#[derive(clap::Args, Debug)]
pub struct MergeSaiArgs {
    /// The shards' .sai files, in the order of their reads in the whole read file (one may
    /// be `-`: standard input).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Output .sai [stdout, or '-']; written whole or not at all.
    #[arg(short = 'o')]
    pub output: Option<PathBuf>,
    /// No summary on stderr.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: MergeSaiArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("merge-sai");
    let mut out = Output::create(args.output.as_deref())?;
    let reads = merge(&args.shards, &mut out)?;
    out.commit().context("writing the merged .sai")?;
    summary.print(None, reads, "reads", args.quiet);
    Ok(())
}

/// Writes the merged `.sai` of `shards` to `out`; returns the number of reads.
pub fn merge<W: Write>(shards: &[PathBuf], out: &mut W) -> Result<u64> {
    crate::input::at_most_one_stdin(&shards.iter().map(|s| ("a shard", s.as_path())).collect::<Vec<_>>())?;
    let names: Vec<PathBuf> = shards.iter().map(|s| crate::input::display_name(s)).collect();
    let mut first: Option<(&Path, GapOptions)> = None;
    let mut reads = 0;
    for (path, shard) in shards.iter().zip(&names) {
        let mut reader = open_shard(path, shard)?;
        match &first {
            None => {
                sai::write_header(out, &reader.options)?;
                first = Some((shard, reader.options));
            }
            Some((first_path, first_opt)) => check_same_options(first_path, first_opt, shard, &reader.options)?,
        }
        let mut record = Vec::new();
        loop {
            record.clear();
            match reader.next_read_bytes(&mut record) {
                Ok(true) => out.write_all(&record)?,
                Ok(false) => break,
                Err(SaiError::Truncated(what)) => {
                    bail!(
                        "{}: read record {} is cut short ({what}): the shard is truncated; re-run its `aln`",
                        shard.display(),
                        reader.reads_done() + 1
                    )
                }
                Err(e) => {
                    return Err(anyhow::Error::from(e).context(format!(
                        "{}: read record {}",
                        shard.display(),
                        reader.reads_done() + 1
                    )))
                }
            }
        }
        reads += reader.reads_done();
    }
    Ok(reads)
}

/// The shard at `path` (`-`: standard input), named `name` in messages.
fn open_shard(path: &Path, name: &Path) -> Result<SaiReader<BufReader<Box<dyn Read + Send>>>> {
    let input = crate::input::open(path)?;
    SaiReader::new(BufReader::with_capacity(1 << 20, input)).map_err(|e| match e {
        SaiError::BadMagic => anyhow::anyhow!("{}: not a BWA .sai file (bad magic)", name.display()),
        SaiError::Truncated(_) => anyhow::anyhow!("{}: the .sai header is cut short", name.display()),
        e => anyhow::Error::from(e).context(format!("{}: reading the .sai header", name.display())),
    })
}

/// The header fields, as bwa aln's option that sets each, for messages.
fn header_fields(o: &GapOptions) -> [(&'static str, String); 16] {
    [
        ("mismatch penalty (-M)", o.s_mm.to_string()),
        ("gap open penalty (-O)", o.s_gapo.to_string()),
        ("gap extension penalty (-E)", o.s_gape.to_string()),
        ("mode bits (-e -L -N -I -B)", format!("{:#x}", o.mode)),
        ("indel end skip (-i)", o.indel_end_skip.to_string()),
        ("max deletion occurrences (-d)", o.max_del_occ.to_string()),
        ("max queue entries (-m)", o.max_entries.to_string()),
        ("missing probability (-n float)", o.fnr.to_string()),
        ("max differences (-n int)", o.max_diff.to_string()),
        ("max gap opens (-o)", o.max_gapo.to_string()),
        ("max gap extensions (-e)", o.max_gape.to_string()),
        ("max seed differences (-k)", o.max_seed_diff.to_string()),
        ("seed length (-l)", o.seed_len.to_string()),
        ("threads (-t)", o.n_threads.to_string()),
        ("max equally best hits (-R)", o.max_top2.to_string()),
        ("trim quality (-q)", o.trim_qual.to_string()),
    ]
}

/// The shards must agree on every option but the thread count. bwa aln 0.7.17 writes its
/// whole gap_opt_t, `-t` included, but `-t` only says how many threads searched (each read's
/// hits are the same whatever the count) and bwa samse never reads it; every other field either
/// changes the search or is read by samse (mode, trim_qual, max_diff, fnr, max_top2). So shards
/// aligned with different `-t` (or on different machines) merge, and the merged header carries
/// the first shard's `-t`.
fn check_same_options(first_path: &Path, first: &GapOptions, path: &Path, opt: &GapOptions) -> Result<()> {
    let mut ignore_threads = *opt;
    ignore_threads.n_threads = first.n_threads;
    if bytemuck::bytes_of(&ignore_threads) == bytemuck::bytes_of(first) {
        return Ok(());
    }
    let differences: Vec<String> = header_fields(first)
        .into_iter()
        .zip(header_fields(opt))
        .filter(|((name, a), (_, b))| a != b && !name.starts_with("threads"))
        .map(|((name, a), (_, b))| format!("{name}: {b} here, {a} in {}", first_path.display()))
        .collect();
    bail!(
        "{}: aligned with other options than {} ({}); every shard must be aligned with the same `aln` options",
        path.display(),
        first_path.display(),
        differences.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sai::{write_header, write_read, AlnHit};

    fn shard(dir: &Path, name: &str, opt: &GapOptions, reads: &[&[AlnHit]]) -> PathBuf {
        let mut bytes = Vec::new();
        write_header(&mut bytes, opt).unwrap();
        for hits in reads {
            write_read(&mut bytes, hits).unwrap();
        }
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn hit(k: u64) -> AlnHit {
        AlnHit { n_mm: 1, score: 3, k, l: k + 1, ..Default::default() }
    }

    #[test]
    fn merged_file_is_the_whole_run() {
        let dir = tempfile::tempdir().unwrap();
        let opt = GapOptions::default();
        let reads: [&[AlnHit]; 4] = [&[hit(1)], &[], &[hit(2), hit(7)], &[hit(3)]];
        let whole = std::fs::read(shard(dir.path(), "whole.sai", &opt, &reads)).unwrap();
        let shards = vec![
            shard(dir.path(), "a.sai", &opt, &reads[..1]),
            shard(dir.path(), "b.sai", &opt, &[]),
            shard(dir.path(), "c.sai", &opt, &reads[1..]),
        ];
        let mut merged = Vec::new();
        assert_eq!(merge(&shards, &mut merged).unwrap(), 4);
        assert_eq!(merged, whole);
    }

    #[test]
    fn thread_count_may_differ_and_the_first_shard_sets_it() {
        let dir = tempfile::tempdir().unwrap();
        let one = GapOptions::default();
        let four = GapOptions { n_threads: 4, ..one };
        let shards = vec![shard(dir.path(), "a.sai", &four, &[&[hit(1)]]), shard(dir.path(), "b.sai", &one, &[&[]])];
        let mut merged = Vec::new();
        merge(&shards, &mut merged).unwrap();
        let reader = SaiReader::new(&merged[..]).unwrap();
        assert_eq!(reader.options.n_threads, 4);
    }

    #[test]
    fn other_options_must_agree() {
        let dir = tempfile::tempdir().unwrap();
        let opt = GapOptions::default();
        let other = GapOptions { s_mm: 4, trim_qual: 15, ..opt };
        let shards = vec![shard(dir.path(), "a.sai", &opt, &[&[]]), shard(dir.path(), "b.sai", &other, &[&[]])];
        let err = format!("{:#}", merge(&shards, &mut Vec::new()).unwrap_err());
        assert!(err.contains("b.sai") && err.contains("a.sai"), "{err}");
        assert!(err.contains("(-M): 4 here, 3 in"), "{err}");
        assert!(err.contains("(-q): 15 here, 0 in"), "{err}");
        assert!(!err.contains("-t"), "{err}");
    }

    #[test]
    fn truncated_shard_names_file_and_record() {
        let dir = tempfile::tempdir().unwrap();
        let opt = GapOptions::default();
        let good = shard(dir.path(), "a.sai", &opt, &[&[hit(1)]]);
        let cut = shard(dir.path(), "b.sai", &opt, &[&[], &[hit(1)], &[hit(2), hit(3)]]);
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
        let err = format!("{:#}", merge(&[good.clone(), cut.clone()], &mut Vec::new()).unwrap_err());
        assert!(err.contains("b.sai: read record 3 is cut short"), "{err}");
        // Cut inside a hit count.
        std::fs::write(&cut, &bytes[..4 + 64 + 2]).unwrap();
        let err = format!("{:#}", merge(&[cut], &mut Vec::new()).unwrap_err());
        assert!(err.contains("b.sai: read record 1 is cut short (hit count"), "{err}");
    }

    #[test]
    fn bad_magic_and_short_header_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.sai");
        std::fs::write(&junk, b"@read1\nACGT\n+\nIIII\n").unwrap();
        let err = format!("{:#}", merge(&[junk], &mut Vec::new()).unwrap_err());
        assert!(err.contains("junk.sai: not a BWA .sai"), "{err}");
        let short = dir.path().join("short.sai");
        std::fs::write(&short, b"SAI\x01\x03\x00").unwrap();
        let err = format!("{:#}", merge(&[short], &mut Vec::new()).unwrap_err());
        assert!(err.contains("short.sai: the .sai header is cut short"), "{err}");
    }
}
