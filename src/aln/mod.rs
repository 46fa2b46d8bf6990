//! `bcuda aln`: BWA's aln algorithm. The CPU path (rayon) is the correctness oracle and the
//! fallback when no GPU is present; its output is byte-identical to `bwa aln` 0.7.17.

pub mod dealer;
pub mod gpus;
pub mod level_search;
pub mod search;
pub mod stack;
pub mod timeline;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bcuda_output::Output;

use crate::gpu::{complete_on_cpu, HostBatch};
use crate::progress::Progress;
use crate::reads::{ReadBatchReader, ReadOptions, ReadSeq};
use crate::sai::{self, AlnHit, GapOptions, MODE_GAPE, MODE_IL13, MODE_LOGGAP, MODE_NONSTOP};
use dealer::{Finished, InOrder};
use gpus::GpuChoice;

/// Reads per batch on the CPU: bwa's own batch (0x40000). bwa caps the gap opens of a whole
/// batch by the longest read in it, so using its batch keeps the answers identical.
pub const CPU_BATCH: usize = 0x40000;

/// Batches a GPU holds at once (one copying while another computes): as many per GPU are
/// parsed and packed while the GPUs open.
const BATCHES_PER_GPU: usize = 2;

/// Batch `seq`: the next batch of up to `n` reads of its end (the ends take turns; none at
/// the end of the input), with the position reached in all the inputs together.
fn read_batch(readers: &mut [ReadBatchReader], seq: u64, n: usize) -> Result<Parsed> {
    let reads = readers[seq as usize % readers.len()].next_batch(n)?;
    Ok(Parsed { gpu_input: None, reads, position: readers.iter().map(|r| r.position().0).sum() })
}

/// Reads per batch: [`CPU_BATCH`], or [`crate::test_hooks::batch_reads`] (sweeps of the
/// pipeline's fill and drain against its per-batch cost). Other batches than bwa's may change
/// the answers for reads of mixed lengths (the cap on gap opens above), so the batch is never
/// smaller by default, not even the first (which would start the GPU sooner).
fn batch_reads() -> usize {
    crate::test_hooks::batch_reads().unwrap_or(CPU_BATCH)
}

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda aln [OPTIONS] [INDEX] <READS>")]
pub struct AlnArgs {
    /// [INDEX] READS: the index prefix (the FASTA given to `index`; left out: the default
    /// index), then the reads (FASTQ or FASTA, plain or gzip; `-` for standard input).
    #[arg(value_name = "ARGS", num_args = 1..=2, required = true)]
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

/// Time each pipeline stage spent working (not waiting), to show which one limits a run.
struct StageBusy {
    start_up: Duration,
    parse: Duration,
    pack: Duration,
    /// The writer: aligning the reads the GPU left (with merging its answers), then the .sai.
    complete: Duration,
    write: Duration,
}

/// A parsed batch on its way through the pipeline: its reads, the GPU's inputs (GPU engine
/// only) and the input file position reached, for progress.
pub struct Parsed {
    reads: Vec<ReadSeq>,
    gpu_input: Option<HostBatch>,
    position: u64,
}

/// A batch ready for the writer: the GPU's hits per read where it has them (`None`: all on
/// the CPU).
type Answered = Finished<Parsed, Vec<Option<Vec<AlnHit>>>>;

/// Whether a batch ends the input: the empty one after the last read, or an error.
fn ends_input(batch: &Result<Parsed>) -> bool {
    matches!(batch, Ok(b) if b.reads.is_empty()) || batch.is_err()
}

pub fn run(args: AlnArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("aln");
    let (index, inputs) = crate::default_index::split_positional("aln", &args.inputs, &["reads.fq"])?;
    index.announce("aln", args.quiet);
    let out = Output::create(args.output.as_deref())?;
    let (outs, reads) = align(&args, &index.prefix, &inputs, vec![out])?;
    // Only a complete .sai is committed; on any error the temporary file is removed.
    outs.into_iter().try_for_each(Output::commit).with_context(|| "writing the .sai")?;
    summary.print(Some(&index.prefix), reads, "reads", args.quiet);
    Ok(())
}

/// Aligns the reads of each file of `reads` against the index at `prefix`, writing each
/// file's .sai into its writer of `outs` (one per file); returns the writers and the reads
/// aligned. The files take turns batch by batch through one pipeline (each batch is one
/// file's, as bwa's batches are), so a paired run opens the GPUs once and both .sai grow
/// together, as `sampe` reads them.
pub fn align<W: Write + Send>(args: &AlnArgs, prefix: &Path, reads: &[PathBuf], outs: Vec<W>) -> Result<(Vec<W>, u64)> {
    assert_eq!(reads.len(), outs.len(), "one .sai per reads file");
    let started = std::time::Instant::now();
    timeline::start();
    let opt = args.gap_options()?;
    let opening = gpus::start_opening(args);
    let bwt_path = bcuda_index::with_ext(prefix, ".bwt");
    let index_started = Instant::now();
    let bwt = bcuda_index::Bwt::load(&bwt_path)?;
    let index_load = index_started.elapsed();
    let read_opts = ReadOptions { trim_qual: opt.trim_qual, illumina13: args.illumina13, sequence_only: true };
    let readers = reads.iter().map(|path| ReadBatchReader::open(path, read_opts)).collect::<Result<Vec<_>, _>>()?;
    let input_size = readers.iter().map(|r| r.position().1).sum();
    let batch_reads = batch_reads();
    // The reader starts now: the first batches (two for each GPU expected) are also packed
    // for the GPU, in the default layout, while the GPUs open and take the BWT, and each goes
    // on as soon as it is ready. The channel holds all but one of them, the reader the last;
    // later on it keeps as far ahead of the GPUs.
    let pack_ahead = opening.is_some();
    let parsed_ahead = if pack_ahead { BATCHES_PER_GPU * gpus::expected_count(args) } else { 2 };
    let (read_tx, read_rx) = std::sync::mpsc::sync_channel::<Result<Parsed>>(parsed_ahead - 1);
    let parser = std::thread::spawn(move || {
        let (mut readers, mut busy) = (readers, Duration::ZERO);
        for seq in 0u64.. {
            let t = Instant::now();
            let mut batch = read_batch(&mut readers, seq, batch_reads);
            timeline::mark(seq, "parsed");
            let done = ends_input(&batch);
            if let (Ok(b), false, true) = (&mut batch, done, pack_ahead && seq < parsed_ahead as u64) {
                b.gpu_input = Some(HostBatch::new(&b.reads, &opt, crate::gpu::Switches::default().sequence_stride));
                timeline::mark(seq, "packed");
            }
            busy += t.elapsed();
            if read_tx.send(batch).is_err() || done {
                break;
            }
        }
        busy
    });
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
    let pool = rayon::ThreadPoolBuilder::new().num_threads(crate::threads::capped("aln", args.threads as usize, args.quiet)).build()?;

    let mut outs = outs;
    for out in &mut outs {
        sai::write_header(out, &opt)?;
    }
    let progress = Progress::new("reads aligned", Some(input_size), args.quiet);
    let start_up = started.elapsed();
    // With several GPUs, a line of progress each.
    let gpu_progress: Vec<Progress> = match gpus.len() {
        0 | 1 => Vec::new(),
        _ => gpus.iter().map(|g| Progress::new(format!("reads on GPU {}", g.ordinal()), None, args.quiet)).collect(),
    };
    // Four stages run at once: the reader parses the next batches, the packer lays them out
    // for the GPU, a feeder per GPU keeps two batches on it (see `dealer`), the writer
    // completes the batches on the CPU (reads the GPU could not hold, or all of them without
    // a GPU) and writes them in input order.
    let stride = gpus.first().map(|g| g.switches().sequence_stride);
    let (outs, cpu_reads, busy, shares) = std::thread::scope(|scope| -> Result<(Vec<W>, usize, StageBusy, Vec<dealer::Share>)> {
        let (packed_tx, packed_rx) = std::sync::mpsc::sync_channel::<Result<Parsed>>(1);
        let (answered_tx, answered_rx) = std::sync::mpsc::sync_channel::<Answered>(1);
        let packer = scope.spawn(move || {
            let mut busy = Duration::ZERO;
            for (seq, mut batch) in (0u64..).zip(read_rx) {
                let t = Instant::now();
                if let Ok(b) = &mut batch {
                    match (stride, &mut b.gpu_input) {
                        // Packed ahead in the default layout: a GPU tuned for the other one gets its own.
                        (Some(stride), Some(input)) => input.repack_for(&b.reads, stride),
                        (Some(stride), None) if !b.reads.is_empty() => {
                            b.gpu_input = Some(HostBatch::new(&b.reads, &opt, stride));
                            timeline::mark(seq, "packed");
                        }
                        // No GPU after all: the CPU aligns the batch.
                        _ => b.gpu_input = None,
                    }
                }
                busy += t.elapsed();
                if packed_tx.send(batch).is_err() {
                    break;
                }
            }
            busy
        });
        let (bwt, opt, pool, progress) = (&bwt, &opt, &pool, &progress);
        let writer = scope.spawn(move || -> Result<(Vec<W>, usize, Duration, Duration)> {
            let (mut cpu_reads, mut complete, mut write, mut order) = (0, Duration::ZERO, Duration::ZERO, InOrder::new());
            let mut reads_before = 0;
            for answered in answered_rx {
                order.push(answered.seq, answered);
                while let Some(Finished { seq, batch, answer }) = order.pop() {
                    // The timeline names the first reads the GPU left to the CPU (from 0, in input order).
                    let left: Vec<String> = match (&answer, timeline::enabled()) {
                        (Some(a), true) => {
                            a.iter().enumerate().filter(|(_, h)| h.is_none()).take(5).map(|(i, _)| (reads_before + i).to_string()).collect()
                        }
                        _ => Vec::new(),
                    };
                    reads_before += batch.reads.len();
                    let t = Instant::now();
                    let ticker = progress.batch(batch.reads.len(), batch.position);
                    let (hits, on_cpu) = pool.install(|| complete_on_cpu(bwt, &batch.reads, opt, answer, &|| ticker.tick()));
                    complete += t.elapsed();
                    let named = if left.is_empty() { String::new() } else { format!(": reads {}", left.join(", ")) };
                    timeline::mark(seq, format!("completed on the CPU ({on_cpu} reads aligned there{named})"));
                    cpu_reads += on_cpu;
                    let t = Instant::now();
                    let end = seq as usize % outs.len();
                    let out = &mut outs[end];
                    for read_hits in &hits {
                        sai::write_read(out, read_hits)?;
                    }
                    write += t.elapsed();
                    timeline::mark(seq, "written");
                    progress.advance(batch.reads.len() as u64, Some(batch.position));
                }
            }
            if order.held() > 0 {
                bail!("{} batches were answered but one before them never was", order.held());
            }
            Ok((outs, cpu_reads, complete, write))
        });
        let batches = packed_rx.into_iter().map(|b| b.map(|p| (p.reads.len(), p))).take_while(|b| !matches!(b, Ok((0, _))));
        let on_answer = |gpu: usize, reads: usize| {
            if let Some(p) = gpu_progress.get(gpu) {
                p.advance(reads as u64, None);
            }
        };
        let fed = dealer::deal(&mut gpus, batches, answered_tx, &on_answer);
        timeline::mark_run("every batch dealt and collected");
        // The writer's own error first: feeding stops when the writer does.
        let (outs, cpu_reads, complete, write) = writer.join().map_err(|_| anyhow::anyhow!("the .sai writer panicked"))??;
        timeline::mark_run("the .sai writer done");
        let shares = fed?;
        // Both have ended with the input (or with the dealer's stop): a panic in either is an
        // error before the .sai is committed.
        let parse = parser.join().map_err(|_| anyhow::anyhow!("the read parser panicked"))?;
        let pack = packer.join().map_err(|_| anyhow::anyhow!("the GPU packer panicked"))?;
        Ok((outs, cpu_reads, StageBusy { start_up, parse, pack, complete, write }, shares))
    })?;
    gpu_progress.iter().for_each(Progress::finish);
    progress.finish();
    if let (Some(first), false) = (gpus.first(), args.quiet) {
        for gpu in &gpus {
            let t = gpu.totals;
            let passes: Vec<String> = gpu
                .passes()
                .iter()
                .enumerate()
                .map(|(p, pass)| {
                    let searchers = match pass.kind {
                        crate::gpu::inexact::PassKind::Thread => format!("{} threads with {} entries each", pass.threads, pass.entries),
                        crate::gpu::inexact::PassKind::Warp => {
                            format!("{} teams of {} threads with {} entries each", pass.searchers(), pass.team, pass.entries)
                        }
                    };
                    // Lookups per second of kernel time, to compare with the GPU's random-gather rate.
                    let rate = t.pass_lookups[p] as f64 / (t.pass_ms[p] as f64 / 1000.0).max(1e-9) / 1e9;
                    format!(
                        "pass {} {:.1} ms on {} reads ({searchers}; {:.2} G occurrence lookups, {rate:.1} G/s)",
                        p + 1,
                        t.pass_ms[p],
                        t.pass_reads[p],
                        t.pass_lookups[p] as f64 / 1e9
                    )
                })
                .collect();
            let which = if gpus.len() > 1 { format!("GPU {} kernels", gpu.ordinal()) } else { "GPU kernels".to_string() };
            eprintln!(
                "[bcuda aln] {which}: exact_match {:.1} ms ({} reads match exactly); inexact search {:.1} ms: D arrays {:.1} ms ({:.2} G occurrence lookups), {}; {} reads outgrew the last pass's stack{}",
                t.exact_ms,
                t.exact_reads,
                t.inexact_ms(),
                t.widths_ms,
                t.widths_lookups as f64 / 1e9,
                passes.join(", "),
                t.stack_overflow_reads,
                match t.first_pass_gave_up {
                    Some((b, finished, handed_on)) => format!("; pass 1 gave up on its reads by the end of batch {} of {} (it had handed on {handed_on} of the {finished} reads it finished, over {:.0} %), so the teams searched them", b + 1, t.batches, crate::gpu::HAND_ON_SHARE * 100.0),
                    None => String::new(),
                },
            );
        }
        gpus::share_lines(&gpus, &shares).iter().for_each(|line| eprintln!("{line}"));
        let sum = |f: fn(&crate::gpu::BatchTimes) -> usize| gpus.iter().map(|g| f(&g.totals)).sum::<usize>();
        let (stack, hits, limit, not_taken) =
            (sum(|t| t.stack_overflow_reads), sum(|t| t.hits_full_reads), sum(|t| t.entries_limit_reads), sum(|t| t.not_taken_reads));
        eprintln!(
            "[bcuda aln] {} reads aligned on the CPU: {stack} over the last pass's stack, {hits} over the GPU's hit list, {limit} where bwa's -m may stop inside a group of chains, {not_taken} the GPU does not take (empty or too long), {} in failed GPU batches; {:.2} s in all",
            cpu_reads,
            cpu_reads.saturating_sub(stack + hits + limit + not_taken),
            started.elapsed().as_secs_f64()
        );
        let st = first.startup;
        eprintln!(
            "[bcuda aln] start-up {:.2} s: index loaded in {:.2} s while the GPU opened (context {:.2} s, kernels {:.2} s: {}, then loaded); BWT copied to the GPU and its interval table (depth {}) built in {:.2} s; the search's scratch allocated at the first batch in {:.2} s",
            busy.start_up.as_secs_f64(),
            index_load.as_secs_f64(),
            st.context_s,
            st.kernels_s,
            if st.kernels_cached { "from the kernel cache" } else { "compiled with NVRTC, cached for the next run" },
            st.interval_depth,
            st.copy_s,
            st.scratch_s
        );
        eprintln!(
            "[bcuda aln] stages busy: parse {:.2} s, pack {:.2} s, CPU completion {:.2} s, .sai {:.2} s",
            busy.parse.as_secs_f64(),
            busy.pack.as_secs_f64(),
            busy.complete.as_secs_f64(),
            busy.write.as_secs_f64()
        );
    }
    // Each GPU's memory and context released on a thread of its own: one after another,
    // several GPUs would each add their release (0.15-0.18 s for one H100: its page-locked
    // batch buffers, then its kernels and context; the timeline has the parts) to the run.
    if !gpus.is_empty() {
        std::thread::scope(|s| {
            gpus.into_iter().for_each(|gpu| {
                s.spawn(move || {
                    let ordinal = gpu.ordinal();
                    let parts: Vec<String> = gpu.release().iter().map(|(what, secs)| format!("{what} {secs:.3} s")).collect();
                    timeline::mark_run(format!("GPU {ordinal} released: {}", parts.join(", ")));
                });
            })
        });
        timeline::mark_run("GPUs released");
    }
    timeline::lines().iter().for_each(|line| eprintln!("{line}"));
    Ok((outs, progress.items()))
}
