//! `bcuda-dev ladder-split`: one rung of a speculative ladder (docs/gpu-search.md, "The `-m`
//! guard"), played with whole `aln` runs so that a GPU's time for the ladder can be measured
//! before the kernels run it.
//!
//! A rung is `aln -n G` over the reads the rungs before it left: bwa's search bounded from the
//! start by G differences. It answers a read whose first hit has fewer than G differences (its
//! hits are then bwa's, where `-m` does not stop bwa), and a read whose own limit is no more than
//! G (the rung was bwa's search). The rest go on to the next rung. Given the rung's `.sai`, this
//! splits the reads into the two FASTQ files, carries each read's number in the whole set along
//! (`--ids`, `--rest-ids`), and with bwa's `.sai` of the whole set (`--bwa`) counts the answered
//! reads whose records are not bwa's.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bcuda::aln_options::{cal_maxdiff, hit_diffs, AVG_ERR};
use bcuda::sai::{self, AlnHit, GapOptions};

use crate::aln_flags::AlnFlags;

#[derive(clap::Args, Debug)]
pub struct LadderSplitArgs {
    /// The rung's reads (FASTQ or FASTA).
    pub reads: PathBuf,
    /// The rung's `.sai` of those reads (`aln -n G`).
    pub sai: PathBuf,
    /// The read's own options (its full limit), as given to bwa.
    #[command(flatten)]
    pub aln: AlnFlags,
    /// The rung's guess G.
    #[arg(long)]
    pub g: i32,
    /// The reads the rung does not answer, for the next rung.
    #[arg(long)]
    pub rest: PathBuf,
    /// The reads it answers.
    #[arg(long)]
    pub answered: Option<PathBuf>,
    /// Each read's number in the whole set, a line each (default: 0, 1, ...).
    #[arg(long)]
    pub ids: Option<PathBuf>,
    /// Where to write the rest's numbers in the whole set.
    #[arg(long)]
    pub rest_ids: Option<PathBuf>,
    /// Where to write the answered reads' numbers in the whole set.
    #[arg(long)]
    pub answered_ids: Option<PathBuf>,
    /// bwa's `.sai` of the whole set: count the answered reads whose records differ from it.
    #[arg(long)]
    pub bwa: Option<PathBuf>,
    /// Where to write the numbers in the whole set of the answered reads whose records are not
    /// bwa's.
    #[arg(long, requires = "bwa")]
    pub differ: Option<PathBuf>,
}

/// Where the split's reads go: a FASTQ and the reads' numbers.
struct Side {
    reads: Box<dyn Write>,
    ids: Option<BufWriter<File>>,
    count: u64,
}

impl Side {
    fn create(reads: Option<&Path>, ids: Option<&Path>) -> Result<Side> {
        let reads: Box<dyn Write> = match reads {
            Some(p) => Box::new(BufWriter::new(File::create(p).with_context(|| p.display().to_string())?)),
            None => Box::new(std::io::sink()),
        };
        let ids =
            ids.map(|p| File::create(p).with_context(|| p.display().to_string()).map(BufWriter::new)).transpose()?;
        Ok(Side { reads, ids, count: 0 })
    }

    fn take(&mut self, record: &[u8], id: u64) -> Result<()> {
        self.reads.write_all(record)?;
        if let Some(ids) = &mut self.ids {
            writeln!(ids, "{id}")?;
        }
        self.count += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.reads.flush()?;
        if let Some(ids) = &mut self.ids {
            ids.flush()?;
        }
        Ok(())
    }
}

pub fn run(args: LadderSplitArgs) -> Result<()> {
    let opt = args.aln.gap_options()?;
    let mut reader = needletail::parse_fastx_file(&args.reads).with_context(|| args.reads.display().to_string())?;
    let mut rung = sai::open(&args.sai)?;
    let mut ids = args.ids.as_deref().map(open_ids).transpose()?;
    let bwa = args.bwa.as_deref().map(load_records).transpose()?;
    let mut rest = Side::create(Some(&args.rest), args.rest_ids.as_deref())?;
    let mut answered = Side::create(args.answered.as_deref(), args.answered_ids.as_deref())?;
    let mut not_bwas = Side::create(None, args.differ.as_deref())?;
    let mut n = 0u64;
    let mut record = Vec::new();
    while let Some(rec) = reader.next() {
        let rec = rec.with_context(|| format!("{}: record {}", args.reads.display(), n + 1))?;
        let Some(hits) = rung.next_read()? else { bail!("{}: fewer records than the reads", args.sai.display()) };
        let id = next_id(&mut ids, n)?;
        record.clear();
        rec.write(&mut record, None)?;
        if !is_answered(&hits, rec.num_bases() as i32, args.g, &opt) {
            rest.take(&record, id)?;
        } else {
            if bwa.as_ref().is_some_and(|b| !same_record(b, id, &hits)) {
                not_bwas.take(&record, id)?;
            }
            answered.take(&record, id)?;
        }
        n += 1;
    }
    if rung.next_read()?.is_some() {
        bail!("{}: more records than the reads", args.sai.display());
    }
    println!(
        "rung g={}: {n} reads, {} answered{}, {} left",
        args.g,
        answered.count,
        if bwa.is_some() { format!(" ({} not bwa's)", not_bwas.count) } else { String::new() },
        rest.count
    );
    rest.finish()?;
    not_bwas.finish()?;
    answered.finish()
}

/// The rung's answer is final: its search was bwa's (the read's limit is no more than G), or its
/// first hit has fewer than G differences and scores less than `s_mm (G + 1)`. A hit with more
/// than G differences scores at least that much, so bwa's first hit is then the rung's, and
/// bwa's search after it is bounded as the rung's is (prune-bound's rule).
fn is_answered(hits: &[AlnHit], len: i32, g: i32, opt: &GapOptions) -> bool {
    let full = if opt.fnr > 0.0 { cal_maxdiff(len, AVG_ERR, opt.fnr as f64) } else { opt.max_diff };
    full <= g || hits.first().is_some_and(|h| hit_diffs(h, opt) < g && (h.score as i32) < opt.s_mm * (g + 1))
}

fn open_ids(path: &Path) -> Result<std::io::Lines<BufReader<File>>> {
    Ok(BufReader::new(File::open(path).with_context(|| path.display().to_string())?).lines())
}

fn next_id(ids: &mut Option<std::io::Lines<BufReader<File>>>, n: u64) -> Result<u64> {
    match ids {
        None => Ok(n),
        Some(lines) => {
            let line = lines.next().context("fewer read numbers than reads")??;
            line.trim().parse().with_context(|| format!("read number {line:?}"))
        }
    }
}

/// Every read's record of a `.sai`, as stored.
fn load_records(path: &Path) -> Result<Vec<Vec<u8>>> {
    let mut sai = sai::open(path)?;
    let mut records = Vec::new();
    let mut record = Vec::new();
    while sai.next_read_bytes(&mut record)? {
        records.push(std::mem::take(&mut record));
    }
    Ok(records)
}

fn same_record(bwa: &[Vec<u8>], id: u64, hits: &[AlnHit]) -> bool {
    let mut record = Vec::new();
    sai::write_read(&mut record, hits).expect("writing to memory");
    bwa.get(id as usize).is_some_and(|b| *b == record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(n_mm: u8, n_gapo: u8, n_gape: u8) -> AlnHit {
        let score = 3 * n_mm as u32 + 11 * n_gapo as u32 + 4 * n_gape as u32;
        AlnHit { n_mm, n_gapo, n_gape, score, ..AlnHit::default() }
    }

    #[test]
    fn a_rung_answers_first_hits_under_its_guess_and_reads_it_searched_in_full() {
        let opt = GapOptions::default();
        // 100 bases at -n 0.04: a limit of 5.
        assert!(is_answered(&[hit(1, 0, 0), hit(2, 0, 0)], 100, 2, &opt));
        assert!(!is_answered(&[hit(2, 0, 0)], 100, 2, &opt));
        // Gap extensions count in bwa's default mode.
        assert!(!is_answered(&[hit(0, 1, 1)], 100, 2, &opt));
        assert!(!is_answered(&[], 100, 4, &opt));
        assert!(is_answered(&[], 100, 5, &opt));
        // Only the first hit decides.
        assert!(!is_answered(&[hit(3, 0, 0), hit(0, 0, 0)], 100, 3, &opt));
        // A gap open and extension: 2 differences, but scoring 15, as 5 mismatches do, which
        // bwa's search may have found first; a mismatch more than 3 scores no more than 12.
        let gap = hit(0, 1, 1);
        assert!(!is_answered(&[gap], 100, 3, &opt) && !is_answered(&[gap], 100, 4, &opt));
        assert!(is_answered(&[hit(3, 0, 0)], 100, 4, &opt));
    }
}
