//! `bcuda aln`: BWA's aln algorithm. The CPU path (rayon) is the correctness oracle and the
//! fallback when no GPU is present; its output is byte-identical to `bwa aln` 0.7.17.

pub mod search;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use crate::output::Output;
use crate::progress::Progress;
use crate::reads::{ReadBatchReader, ReadOptions, ReadSeq};
use crate::sai::{self, AlnHit, GapOptions, MODE_GAPE, MODE_IL13, MODE_LOGGAP, MODE_NONSTOP};
use search::{align_read, batch_options, Scratch};

/// Reads per batch on the CPU: bwa's own batch (0x40000). bwa caps the gap opens of a whole
/// batch by the longest read in it, so using its batch keeps the answers identical.
pub const CPU_BATCH: usize = 0x40000;

#[derive(clap::Args, Debug)]
pub struct AlnArgs {
    /// Index prefix (the FASTA path given to `index`).
    pub prefix: PathBuf,
    /// Reads: FASTQ or FASTA, plain or gzip.
    pub reads: PathBuf,
    /// Max differences (integer) or missing probability under 0.02 error rate (float).
    #[arg(short = 'n', default_value = "0.04")]
    pub max_diff: String,
    /// Maximum number of gap opens.
    #[arg(short = 'o', default_value_t = 1)]
    pub max_gapo: i32,
    /// Maximum number of gap extensions, -1 for k-difference mode (disallowing long gaps).
    #[arg(short = 'e', default_value_t = -1, allow_negative_numbers = true)]
    pub max_gape: i32,
    /// Do not put an indel within INT bp towards the ends.
    #[arg(short = 'i', default_value_t = 5)]
    pub indel_end_skip: i32,
    /// Maximum occurrences for extending a long deletion.
    #[arg(short = 'd', default_value_t = 10)]
    pub max_del_occ: i32,
    /// Seed length.
    #[arg(short = 'l', default_value_t = 32)]
    pub seed_len: i32,
    /// Maximum differences in the seed.
    #[arg(short = 'k', default_value_t = 2)]
    pub max_seed_diff: i32,
    /// Maximum entries in the queue.
    #[arg(short = 'm', default_value_t = 2_000_000)]
    pub max_entries: i32,
    /// Number of threads.
    #[arg(short = 't', default_value_t = 1)]
    pub threads: i32,
    /// Mismatch penalty.
    #[arg(short = 'M', default_value_t = 3)]
    pub s_mm: i32,
    /// Gap open penalty.
    #[arg(short = 'O', default_value_t = 11)]
    pub s_gapo: i32,
    /// Gap extension penalty.
    #[arg(short = 'E', default_value_t = 4)]
    pub s_gape: i32,
    /// Stop searching when there are more than INT equally best hits.
    #[arg(short = 'R', default_value_t = 30)]
    pub max_top2: i32,
    /// Quality threshold for read trimming down to 35 bp.
    #[arg(short = 'q', default_value_t = 0)]
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
    /// Reads per batch (the GPU rounds it to a multiple of its cores).
    #[arg(long, default_value_t = 159_744)]
    pub batch_size: usize,
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
        if self.threads < 1 {
            bail!("-t {}: the number of threads must be at least 1", self.threads);
        }
        if self.seed_len < 1 {
            bail!("-l {}: the seed length must be positive", self.seed_len);
        }
        Ok(opt)
    }
}

/// Aligns one batch on the CPU, reads in parallel, hits in input order.
pub fn align_batch_cpu(bwt: &bcuda_index::Bwt, reads: &[ReadSeq], opt: &GapOptions) -> Vec<Vec<AlnHit>> {
    let max_len = reads.iter().map(|r| r.len).max().unwrap_or(0);
    let batch_opt = batch_options(opt, max_len);
    reads
        .par_iter()
        .with_min_len(64)
        .map_init(Scratch::default, |scratch, read| align_read(bwt, read.aligned(), &batch_opt, scratch))
        .collect()
}

/// Which engine aligns: the GPU when one is usable (or forced), else the CPU.
enum Engine {
    Cpu(rayon::ThreadPool),
    Gpu(Box<crate::gpu::GpuAligner>),
}

fn choose_engine(args: &AlnArgs, bwt: &bcuda_index::Bwt) -> Result<Engine> {
    let cpu = || -> Result<Engine> { Ok(Engine::Cpu(rayon::ThreadPoolBuilder::new().num_threads(args.threads as usize).build()?)) };
    if args.cpu {
        return cpu();
    }
    if !args.gpu && !crate::gpu::driver_present() {
        return cpu();
    }
    match crate::gpu::GpuAligner::new(bwt, crate::gpu::Switches::default(), args.batch_size) {
        Ok(mut gpu) => {
            if !args.quiet {
                eprintln!("[bcuda aln] aligning on {} (compute {}.{})", gpu.device_name, gpu.compute_capability.0, gpu.compute_capability.1);
            }
            if !args.no_tuned {
                match crate::autotune_cmd::use_tuned(&mut gpu) {
                    Ok(Some(speedup)) if !args.quiet => eprintln!("[bcuda aln] using the exact_match kernel tuned for this GPU ({speedup:.2}x on its held-out reads)"),
                    Ok(_) => {}
                    Err(e) => eprintln!("[bcuda aln] ignoring the tuned kernel for this GPU ({e:#})"),
                }
            }
            Ok(Engine::Gpu(Box::new(gpu)))
        }
        Err(e) if args.gpu => Err(e.context("aln --gpu: no usable GPU")),
        Err(e) => {
            if !args.quiet {
                eprintln!("[bcuda aln] GPU not usable ({e:#}); aligning on the CPU");
            }
            cpu()
        }
    }
}

pub fn run(args: AlnArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let opt = args.gap_options()?;
    let bwt_path = bcuda_index::with_ext(&args.prefix, ".bwt");
    let bwt = bcuda_index::Bwt::load(&bwt_path)?;
    let read_opts = ReadOptions { trim_qual: opt.trim_qual, illumina13: args.illumina13 };
    let reader = ReadBatchReader::open(&args.reads, read_opts)?;
    let mut engine = choose_engine(&args, &bwt)?;

    let mut out = Output::create(args.output.as_deref())?;
    sai::write_header(&mut out, &opt)?;
    let mut progress = Progress::new("reads aligned", Some(reader.position().1), args.quiet);
    // Reading and parsing the next batch overlaps aligning the current one.
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(Vec<ReadSeq>, u64)>>(1);
        let mut reader = reader;
        scope.spawn(move || loop {
            let batch = reader.next_batch(CPU_BATCH).map(|b| (b, reader.position().0)).map_err(anyhow::Error::from);
            let done = matches!(&batch, Ok((b, _)) if b.is_empty()) || batch.is_err();
            if tx.send(batch).is_err() || done {
                break;
            }
        });
        for batch in rx {
            let (batch, position) = batch?;
            if batch.is_empty() {
                break;
            }
            let hits = match &mut engine {
                Engine::Cpu(pool) => pool.install(|| align_batch_cpu(&bwt, &batch, &opt)),
                Engine::Gpu(gpu) => match gpu.align_batch(&bwt, &batch, &opt) {
                    Ok(hits) => hits,
                    Err(e) => {
                        // Out of memory or any other GPU failure: smaller launches next time,
                        // and this batch on the CPU, so no read is lost.
                        gpu.launch_reads = (gpu.launch_reads / 2).max(1024);
                        eprintln!("[bcuda aln] GPU batch failed ({e:#}); aligning it on the CPU");
                        align_batch_cpu(&bwt, &batch, &opt)
                    }
                },
            };
            for read_hits in &hits {
                sai::write_read(&mut out, read_hits)?;
            }
            progress.advance(batch.len() as u64, Some(position));
        }
        Ok(())
    })?;
    progress.finish();
    if let (Engine::Gpu(gpu), false) = (&engine, args.quiet) {
        let t = gpu.totals;
        eprintln!(
            "[bcuda aln] GPU kernels: exact_match {:.1} ms ({} reads match exactly), inexact_match {:.1} ms; {} reads aligned on the CPU (too long or over GPU scratch); {:.1} ms in GPU batches of {:.1} s in all",
            t.exact_ms, t.exact_reads, t.inexact_ms, t.cpu_fallback_reads, t.batch_ms, started.elapsed().as_secs_f64()
        );
    }
    out.commit().with_context(|| "writing the .sai")?;
    Ok(())
}
