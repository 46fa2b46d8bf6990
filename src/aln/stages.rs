//! The stages of `aln`'s pipeline, each on a thread of its own so that they overlap: the
//! parser reads batches (and packs the first ones for the GPU while the GPUs open), the packer
//! lays the others out for the GPU, a feeder per GPU keeps two batches on it (see
//! [`dealer`](super::dealer)), and the writer completes each batch on the CPU (the reads the
//! GPU could not hold, or all of them without a GPU) and writes its hits in input order. The
//! writer hands each batch's reads back to the parser, which reads the next batch into them:
//! the batches' buffers go round the pipeline instead of being made afresh.

use std::sync::mpsc::{Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::io::Write;

use anyhow::{bail, Result};

use super::complete::complete_on_cpu;
use super::dealer::{self, Finished, InOrder, Share};
use super::timeline;
use crate::gpu::{GpuAligner, HostBatch};
use crate::progress::Progress;
use crate::reads::{ReadBatch, ReadBatchReader};
use crate::sai::{self, AlnHit, GapOptions};

/// A parsed batch on its way through the pipeline: its reads, the GPU's inputs (GPU engine
/// only) and the input file position reached, for progress.
pub struct Parsed {
    pub(super) reads: ReadBatch,
    pub(super) gpu_input: Option<HostBatch>,
    pub(super) position: u64,
}

/// A batch ready for the writer: the GPU's hits per read where it has them (`None`: all on
/// the CPU).
type Answered = Finished<Parsed, Vec<Option<Vec<AlnHit>>>>;

/// Time each pipeline stage spent working (not waiting), to show which one limits a run.
pub struct StageBusy {
    pub start_up: Duration,
    pub parse: Duration,
    pub pack: Duration,
    /// The writer: aligning the reads the GPU left (with merging its answers), then the .sai.
    pub complete: Duration,
    pub write: Duration,
}

/// What the run shares between its stages: the index, the options, the CPU's threads, the
/// progress of the whole input, and the way back to the parser for the batches written.
pub struct Run<'a> {
    pub bwt: &'a bcuda_index::Bwt,
    pub opt: &'a GapOptions,
    pub pool: &'a rayon::ThreadPool,
    pub progress: Progress,
    pub spent: SyncSender<ReadBatch>,
}

/// Batches written that wait for the parser to read into them. The pipeline holds a bounded
/// number of batches, each going round from the parser to the writer, so a few suffice: one
/// more finds the channel full and is freed.
pub const SPARE_BATCHES: usize = 4;

/// How the reads were shared: how many were aligned, how many of them by the CPU, and each
/// GPU's share.
pub struct Aligned {
    pub reads: u64,
    pub cpu_reads: usize,
    pub shares: Vec<Share>,
}

/// Batch `seq`: the next batch of up to `n` reads of its end (the ends take turns; none at
/// the end of the input) read into `reads`, with the position reached in all the inputs
/// together.
fn read_batch(readers: &mut [ReadBatchReader], seq: u64, n: usize, mut reads: ReadBatch) -> Result<Parsed> {
    readers[seq as usize % readers.len()].next_batch_into(&mut reads, n)?;
    Ok(Parsed { gpu_input: None, reads, position: readers.iter().map(|r| r.position().0).sum() })
}

/// Whether a batch ends the input: the empty one after the last read, or an error.
fn ends_input(batch: &Result<Parsed>) -> bool {
    matches!(batch, Ok(b) if b.reads.is_empty()) || batch.is_err()
}

/// The parser: batches of `batch_reads` reads until the input ends (the empty batch or an
/// error is sent last), each read into a batch the writer is done with when there is one;
/// the first `pack_ahead` batches are packed for the GPU in the default layout. Returns the
/// time it worked.
pub fn parse(
    mut readers: Vec<ReadBatchReader>,
    batch_reads: usize,
    opt: &GapOptions,
    pack_ahead: Option<usize>,
    tx: SyncSender<Result<Parsed>>,
    spent: Receiver<ReadBatch>,
) -> Duration {
    let mut busy = Duration::ZERO;
    for seq in 0u64.. {
        let t = Instant::now();
        let mut batch = read_batch(&mut readers, seq, batch_reads, spent.try_recv().unwrap_or_default());
        timeline::mark(seq, "parsed");
        let done = ends_input(&batch);
        if let (Ok(b), false, Some(ahead)) = (&mut batch, done, pack_ahead) {
            if seq < ahead as u64 {
                b.gpu_input = Some(HostBatch::new(&b.reads, opt, crate::gpu::Switches::default().sequence_stride));
                timeline::mark(seq, "packed");
            }
        }
        busy += t.elapsed();
        if tx.send(batch).is_err() || done {
            break;
        }
    }
    busy
}

/// The packer: lays each batch out for the GPUs' `stride` (none: no GPU, the CPU aligns it).
fn pack(
    rx: Receiver<Result<Parsed>>,
    tx: SyncSender<Result<Parsed>>,
    stride: Option<bool>,
    opt: &GapOptions,
) -> Duration {
    let mut busy = Duration::ZERO;
    for (seq, mut batch) in (0u64..).zip(rx) {
        let t = Instant::now();
        if let Ok(b) = &mut batch {
            match (stride, &mut b.gpu_input) {
                // Packed ahead in the default layout: a GPU tuned for the other one gets its own.
                (Some(stride), Some(input)) => input.repack_for(&b.reads, stride),
                (Some(stride), None) if !b.reads.is_empty() => {
                    b.gpu_input = Some(HostBatch::new(&b.reads, opt, stride));
                    timeline::mark(seq, "packed");
                }
                // No GPU after all: the CPU aligns the batch.
                _ => b.gpu_input = None,
            }
        }
        busy += t.elapsed();
        if tx.send(batch).is_err() {
            break;
        }
    }
    busy
}

/// What the writer did: each end's .sai (not yet committed), the reads it aligned on the CPU
/// and its time aligning them and writing.
struct Written<W> {
    outs: Vec<W>,
    reads: u64,
    cpu_reads: usize,
    complete: Duration,
    write: Duration,
}

/// The writer: puts the answered batches back in input order, completes each on the CPU and
/// writes its hits into its end's .sai (batch `seq` is end `seq % outs.len()`'s).
fn write_in_order<W: Write>(rx: Receiver<Answered>, mut outs: Vec<W>, run: &Run) -> Result<Written<W>> {
    let (mut cpu_reads, mut complete, mut write, mut order) = (0, Duration::ZERO, Duration::ZERO, InOrder::new());
    let mut reads_before = 0;
    for answered in rx {
        order.push(answered.seq, answered);
        while let Some(Finished { seq, batch, answer }) = order.pop() {
            // The timeline names the first reads the GPU left to the CPU (from 0, in input order).
            let left: Vec<String> = match (&answer, timeline::enabled()) {
                (Some(a), true) => a
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| h.is_none())
                    .take(5)
                    .map(|(i, _)| (reads_before + i).to_string())
                    .collect(),
                _ => Vec::new(),
            };
            reads_before += batch.reads.len();
            let t = Instant::now();
            let ticker = run.progress.batch(batch.reads.len(), batch.position);
            let (hits, on_cpu) =
                run.pool.install(|| complete_on_cpu(run.bwt, &batch.reads, run.opt, answer, &|| ticker.tick()));
            complete += t.elapsed();
            let named = if left.is_empty() { String::new() } else { format!(": reads {}", left.join(", ")) };
            timeline::mark(seq, format!("completed on the CPU ({on_cpu} reads aligned there{named})"));
            cpu_reads += on_cpu;
            let t = Instant::now();
            let end = seq as usize % outs.len();
            for read_hits in &hits {
                sai::write_read(&mut outs[end], read_hits)?;
            }
            write += t.elapsed();
            timeline::mark(seq, "written");
            run.progress.advance(batch.reads.len() as u64, Some(batch.position));
            // Freed instead when enough wait already, or when the parser has ended.
            let _ = run.spent.try_send(batch.reads);
        }
    }
    if order.held() > 0 {
        bail!("{} batches were answered but one before them never was", order.held());
    }
    Ok(Written { outs, reads: reads_before as u64, cpu_reads, complete, write })
}

/// Runs the packer, the dealer and the writer on the batches the parser sends; returns each
/// end's .sai, whole but not committed (the caller commits only a complete one).
pub fn align_all<W: Write + Send>(
    run: Run,
    gpus: &mut [GpuAligner],
    outs: Vec<W>,
    parser: JoinHandle<Duration>,
    parsed: Receiver<Result<Parsed>>,
    quiet: bool,
) -> Result<(Vec<W>, Aligned, StageBusy)> {
    // With several GPUs, a line of progress each.
    let gpu_progress: Vec<Progress> = match gpus.len() {
        0 | 1 => Vec::new(),
        _ => gpus.iter().map(|g| Progress::new(format!("reads on GPU {}", g.ordinal()), None, quiet)).collect(),
    };
    let stride = gpus.first().map(|g| g.switches().sequence_stride);
    let done = std::thread::scope(|scope| -> Result<(Vec<W>, Aligned, StageBusy)> {
        let (packed_tx, packed_rx) = std::sync::mpsc::sync_channel::<Result<Parsed>>(1);
        let (answered_tx, answered_rx) = std::sync::mpsc::sync_channel::<Answered>(1);
        let opt = run.opt;
        let packer = scope.spawn(move || pack(parsed, packed_tx, stride, opt));
        let run = &run;
        let writer = scope.spawn(move || write_in_order(answered_rx, outs, run));
        let batches =
            packed_rx.into_iter().map(|b| b.map(|p| (p.reads.len(), p))).take_while(|b| !matches!(b, Ok((0, _))));
        let on_answer = |gpu: usize, reads: usize| {
            if let Some(p) = gpu_progress.get(gpu) {
                p.advance(reads as u64, None);
            }
        };
        let fed = dealer::deal(gpus, batches, answered_tx, &on_answer);
        timeline::mark_run("every batch dealt and collected");
        // The writer's own error first: feeding stops when the writer does.
        let written = writer.join().map_err(|_| anyhow::anyhow!("the .sai writer panicked"))??;
        timeline::mark_run("the .sai writer done");
        let shares = fed?;
        // Both have ended with the input (or with the dealer's stop): a panic in either is an
        // error before the .sai is committed.
        let parse = parser.join().map_err(|_| anyhow::anyhow!("the read parser panicked"))?;
        let pack = packer.join().map_err(|_| anyhow::anyhow!("the GPU packer panicked"))?;
        let busy =
            StageBusy { start_up: Duration::ZERO, parse, pack, complete: written.complete, write: written.write };
        Ok((written.outs, Aligned { reads: written.reads, cpu_reads: written.cpu_reads, shares }, busy))
    })?;
    gpu_progress.iter().for_each(Progress::finish);
    run.progress.finish();
    Ok(done)
}
