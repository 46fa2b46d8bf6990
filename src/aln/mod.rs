//! `bcuda aln`: BWA's aln algorithm. The CPU path (rayon) is the correctness oracle and the
//! fallback when no GPU is present; its output is byte-identical to `bwa aln` 0.7.17.

mod complete;
pub mod dealer;
pub mod gpus;
mod report;
mod stages;
pub mod timeline;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use bcuda_output::Output;

use crate::progress::Progress;
use crate::reads::{ReadBatchReader, ReadOptions};
use crate::sai::{self, GapOptions, MODE_GAPE, MODE_IL13, MODE_LOGGAP, MODE_NONSTOP};
use gpus::GpuChoice;
pub use stages::{Parsed, SPARE_BATCHES};

/// Reads per batch on the CPU: bwa's own batch (0x40000). bwa caps the gap opens of a whole
/// batch by the longest read in it, so using its batch keeps the answers identical.
pub const CPU_BATCH: usize = 0x40000;

/// Batches a GPU holds at once (one copying while another computes): as many per GPU are
/// parsed and packed while the GPUs open.
const BATCHES_PER_GPU: usize = 2;

/// Reads per batch: [`CPU_BATCH`], or [`crate::test_hooks::batch_reads`] (sweeps of the
/// pipeline's fill and drain against its per-batch cost). Other batches than bwa's may change
/// the answers for reads of mixed lengths (the cap on gap opens above), so the batch is never
/// smaller by default, not even the first (which would start the GPU sooner).
fn batch_reads() -> usize {
    crate::test_hooks::batch_reads().unwrap_or(CPU_BATCH)
}

/// The index and the read files of `aln`'s positional arguments: `[INDEX] READS` as every
/// command takes them, or `INDEX READS...` (several read files, read as their concatenation:
/// the index is named, so that a forgotten index is never taken for reads).
fn read_files(args: &[PathBuf]) -> Result<(crate::default_index::IndexChoice, Vec<PathBuf>)> {
    let names = vec!["reads.fq"; args.len().saturating_sub(1).max(1)];
    let (index, reads) = crate::default_index::split_positional("aln", args, &names)?;
    let stdin: Vec<(&str, &std::path::Path)> = reads.iter().map(|p| ("READS", p.as_path())).collect();
    crate::input::at_most_one_stdin(&stdin)?;
    Ok((index, reads))
}

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda aln [OPTIONS] [INDEX] <READS>...")]
pub struct AlnArgs {
    /// [INDEX] READS...: the index prefix (the FASTA given to `index`; left out: the default
    /// index), then the reads (FASTQ or FASTA, plain, gzip, BGZF, bzip2, xz or zstd; `-` for
    /// standard input). Several read files give the .sai of their concatenation (give samse
    /// and sampe the same files concatenated); the index must then be named.
    #[arg(value_name = "ARGS", num_args = 1.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Max differences (integer) or missing probability under 0.02 error rate (float).
    #[arg(short = 'n', default_value = "0.04", allow_hyphen_values = true, value_parser = crate::option_values::max_diff)]
    pub max_diff: String,
    /// Maximum number of gap opens.
    #[arg(short = 'o', default_value_t = 1, allow_negative_numbers = true, value_parser = crate::option_values::diffs)]
    pub max_gapo: i32,
    /// Maximum number of gap extensions; 0 or less (bwa's -1) for k-difference mode
    /// (disallowing long gaps).
    #[arg(short = 'e', default_value_t = -1, allow_negative_numbers = true, value_parser = crate::option_values::max_gape)]
    pub max_gape: i32,
    /// Do not put an indel within INT bp towards the ends.
    #[arg(short = 'i', default_value_t = 5, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub indel_end_skip: i32,
    /// Maximum occurrences for extending a long deletion.
    #[arg(short = 'd', default_value_t = 10, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub max_del_occ: i32,
    /// Seed length.
    #[arg(short = 'l', default_value_t = 32, allow_negative_numbers = true, value_parser = crate::option_values::at_least_1)]
    pub seed_len: i32,
    /// Maximum differences in the seed.
    #[arg(short = 'k', default_value_t = 2, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub max_seed_diff: i32,
    /// Maximum entries in the queue.
    #[arg(short = 'm', default_value_t = 2_000_000, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub max_entries: i32,
    /// Number of threads.
    #[arg(short = 't', default_value_t = 1, allow_negative_numbers = true, value_parser = crate::option_values::at_least_1)]
    pub threads: i32,
    /// Mismatch penalty.
    #[arg(short = 'M', default_value_t = 3, allow_negative_numbers = true, value_parser = crate::option_values::penalty)]
    pub s_mm: i32,
    /// Gap open penalty.
    #[arg(short = 'O', default_value_t = 11, allow_negative_numbers = true, value_parser = crate::option_values::penalty)]
    pub s_gapo: i32,
    /// Gap extension penalty.
    #[arg(short = 'E', default_value_t = 4, allow_negative_numbers = true, value_parser = crate::option_values::penalty)]
    pub s_gape: i32,
    /// Stop searching when there are more than INT equally best hits.
    #[arg(short = 'R', default_value_t = 30, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub max_top2: i32,
    /// Quality threshold for read trimming down to 35 bp.
    #[arg(short = 'q', default_value_t = 0, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub trim_qual: i32,
    /// Log-scaled gap penalty for long deletions.
    #[arg(short = 'L')]
    pub log_gap: bool,
    /// Non-iterative mode: search for all n-difference hits (slow).
    #[arg(short = 'N')]
    pub non_stop: bool,
    /// The input is in the Illumina 1.3+ FASTQ-like format.
    #[arg(short = 'I')]
    pub illumina13: bool,
    /// File to write the .sai to [stdout]; written whole or not at all.
    #[arg(short = 'f')]
    pub output: Option<PathBuf>,
    /// Force the CPU path even when a GPU is present.
    #[arg(long, conflicts_with = "gpu")]
    pub cpu: bool,
    /// Force the GPU path; an error when no usable GPU is found.
    #[arg(long)]
    pub gpu: bool,
    /// GPUs to align on: the first N visible, or a list of ordinals (0,2; one alone: 1,)
    /// [all visible; CUDA_VISIBLE_DEVICES sets which are visible].
    #[arg(long, value_name = "N|LIST", conflicts_with = "cpu", allow_negative_numbers = true)]
    pub gpus: Option<GpuChoice>,
    /// Ignore a kernel tuned by `bcuda autotune` for this GPU.
    #[arg(long)]
    pub no_tuned: bool,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

impl AlnArgs {
    /// gap_opt_t as bwa aln fills it from these options (this is also the .sai header).
    pub fn gap_options(&self) -> Result<GapOptions> {
        let mut opt = GapOptions::default();
        if self.max_diff.contains('.') {
            opt.fnr = self.max_diff.parse().with_context(|| format!("-n {}: not a number", self.max_diff))?;
            opt.max_diff = -1;
        } else {
            opt.max_diff = self.max_diff.parse().with_context(|| format!("-n {}: not a number", self.max_diff))?;
            opt.fnr = -1.0;
        }
        opt.max_gapo = self.max_gapo;
        opt.indel_end_skip = self.indel_end_skip;
        opt.max_del_occ = self.max_del_occ;
        opt.seed_len = self.seed_len;
        opt.max_seed_diff = self.max_seed_diff;
        opt.max_entries = self.max_entries;
        opt.n_threads = self.threads;
        opt.s_mm = self.s_mm;
        opt.s_gapo = self.s_gapo;
        opt.s_gape = self.s_gape;
        opt.max_top2 = self.max_top2;
        opt.trim_qual = self.trim_qual;
        if self.log_gap {
            opt.mode |= MODE_LOGGAP;
        }
        if self.non_stop {
            opt.mode |= MODE_NONSTOP;
            opt.max_top2 = 0x7fff_ffff;
        }
        if self.illumina13 {
            opt.mode |= MODE_IL13;
        }
        if self.max_gape > 0 {
            opt.max_gape = self.max_gape;
            opt.mode &= !MODE_GAPE;
        }
        Ok(opt)
    }
}

/// `bcuda aln`: the .sai of the reads (their files concatenated), committed only when whole.
pub fn run(args: AlnArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("aln");
    let (index, inputs) = read_files(&args.inputs)?;
    index.announce("aln", args.quiet);
    let out = Output::create(args.output.as_deref())?;
    let (outs, reads) = align(&args, &index.prefix, &[inputs], vec![out])?;
    // Only a complete .sai is committed; on any error the temporary file is removed.
    outs.into_iter().try_for_each(Output::commit).with_context(|| "writing the .sai")?;
    timeline::mark_run(".sai committed");
    summary.print(Some(&index.prefix), reads, "reads", args.quiet);
    Ok(())
}

/// bwa_aln_core's loop: read a batch, align it (on the GPUs, the CPU completing what they
/// leave), write its hits to the .sai in input order; here as stages on threads of their own
/// (see [`stages`]) so that reading, the GPUs and writing overlap. Each end of `ends` (its
/// files concatenated) gets its .sai in its writer of `outs`; the ends take turns batch by
/// batch through one pipeline (each batch is one end's, as bwa's batches are), so a paired
/// run opens the GPUs once and both .sai grow together, as `sampe` reads them. Returns the
/// writers (not committed) and the reads aligned.
pub fn align<W: Write + Send>(
    args: &AlnArgs,
    prefix: &Path,
    ends: &[Vec<PathBuf>],
    outs: Vec<W>,
) -> Result<(Vec<W>, u64)> {
    assert_eq!(ends.len(), outs.len(), "one .sai per end");
    let started = Instant::now();
    timeline::start();
    let opt = args.gap_options()?;
    let opening = gpus::start_opening(args);
    let index_started = Instant::now();
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(prefix, ".bwt"))?;
    let index_load = index_started.elapsed();
    let read_opts = ReadOptions { trim_qual: opt.trim_qual, illumina13: args.illumina13, sequence_only: true };
    let readers =
        ends.iter().map(|files| ReadBatchReader::open_all(files, read_opts)).collect::<Result<Vec<_>, _>>()?;
    let input_size = readers.iter().map(|r| r.position().1).sum();
    // The reader starts now: the first batches (two for each GPU expected) are also packed
    // for the GPU, in the default layout, while the GPUs open and take the BWT, and each goes
    // on as soon as it is ready. The channel holds all but one of them, the reader the last;
    // later on it keeps as far ahead of the GPUs.
    let pack_ahead = opening.is_some().then(|| BATCHES_PER_GPU * gpus::expected_count(args));
    let (read_tx, read_rx) = std::sync::mpsc::sync_channel::<Result<Parsed>>(pack_ahead.unwrap_or(2) - 1);
    let batch_reads = batch_reads();
    let (spent_tx, spent_rx) = std::sync::mpsc::sync_channel(stages::SPARE_BATCHES);
    let parser = std::thread::spawn(move || stages::parse(readers, batch_reads, &opt, pack_ahead, read_tx, spent_rx));
    let mut gpus = std::thread::scope(|s| {
        // The BWT's pages mapped in while the GPUs open, so that its copy does not stop at
        // every page (it spent 0.10-0.13 s on 1 GB before, 0.10 s after: a small gain).
        if opening.is_some() {
            s.spawn(|| {
                bwt.populate();
                timeline::mark_run("BWT mapped in");
            });
        }
        gpus::open_aligners(args, &bwt, opening)
    })?;
    // The .sai header keeps the -t given (as bwa writes it); the pool runs what the machine can.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(crate::threads::capped("aln", args.threads as usize, args.quiet))
        .build()?;
    let mut outs = outs;
    for out in &mut outs {
        sai::write_header(out, &opt)?;
    }
    let progress = Progress::new("reads aligned", Some(input_size), args.quiet);
    let start_up = started.elapsed();
    let run = stages::Run { bwt: &bwt, opt: &opt, pool: &pool, progress, spent: spent_tx };
    let (outs, aligned, mut busy) = stages::align_all(run, &mut gpus, outs, parser, read_rx, args.quiet)?;
    busy.start_up = start_up;
    if !args.quiet && !gpus.is_empty() {
        report::print(&gpus, &aligned, &busy, index_load, started);
    }
    gpus::release_all(gpus);
    timeline::lines().iter().for_each(|line| eprintln!("{line}"));
    Ok((outs, aligned.reads))
}
