//! bwa aln's search options as the dev tools take them (`-n`, `-o`, `-l`, `-m`), and the loop
//! that runs a per-read profile over a FASTQ with them.

use std::path::Path;

use anyhow::Result;
use bcuda::aln::CPU_BATCH;
use bcuda::aln_options::batch_options;
use bcuda::reads::{ReadBatchReader, ReadOptions};
use bcuda::sai::GapOptions;
use rayon::prelude::*;

#[derive(clap::Args, Debug)]
pub struct AlnFlags {
    /// bwa's `-m`: the most entries on the stack before the search stops.
    #[arg(short = 'm', long, default_value_t = GapOptions::default().max_entries)]
    pub max_entries: i32,
    /// bwa's `-n`: maximum differences (integer) or missing probability (with a '.').
    #[arg(short = 'n', default_value = "0.04", value_parser = bcuda::option_values::max_diff)]
    pub max_diff: String,
    /// bwa's `-o`: maximum gap opens.
    #[arg(short = 'o', default_value_t = GapOptions::default().max_gapo)]
    pub max_gapo: i32,
    /// bwa's `-l`: seed length.
    #[arg(short = 'l', default_value_t = GapOptions::default().seed_len)]
    pub seed_len: i32,
}

impl AlnFlags {
    /// bwa's options as `aln` takes them from these flags.
    pub fn gap_options(&self) -> Result<GapOptions> {
        let mut opt = GapOptions { max_entries: self.max_entries, ..GapOptions::default() };
        if self.max_diff.contains('.') {
            (opt.fnr, opt.max_diff) = (self.max_diff.parse()?, -1);
        } else {
            (opt.fnr, opt.max_diff) = (-1.0, self.max_diff.parse()?);
        }
        (opt.max_gapo, opt.seed_len) = (self.max_gapo, self.seed_len);
        Ok(opt)
    }
}

/// `profile` of each of the first `max_reads` reads of `reads` (their aligned part) with `opt`
/// as aln sets it per batch, in order, the reads of a batch in parallel.
pub fn profile_reads<T: Send>(
    reads: &Path,
    max_reads: Option<usize>,
    opt: &GapOptions,
    profile: impl Fn(&[u8], &GapOptions) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let mut reader = ReadBatchReader::open(reads, ReadOptions::default())?;
    let limit = max_reads.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    while out.len() < limit {
        let batch = reader.next_batch(CPU_BATCH.min(limit - out.len()))?;
        if batch.is_empty() {
            break;
        }
        let batch_opt = batch_options(opt, batch.iter().map(|r| r.len).max().unwrap_or(0));
        let done: Result<Vec<T>> = batch.par_iter().map(|r| profile(r.aligned(), &batch_opt)).collect();
        out.extend(done?);
    }
    Ok(out)
}
