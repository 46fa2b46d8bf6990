//! `bcuda-dev dealer-sim`: `aln`'s dealer (the real `bcuda::aln::dealer::deal`) and an in-order
//! writer (the real `InOrder`) run on simulated GPUs, a simulated parser and a simulated
//! writer, each set to a rate in reads per second, on a clock sped up `--speed` times. It
//! prints, for 1 to 8 GPUs, the time to align the reads and its speed-up over one GPU, then,
//! with one GPU slower than the others, the most batches the writer held waiting for their
//! turn and what they weigh in host memory.

use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use anyhow::Result;

use bcuda::aln::dealer::{self, AsyncAligner, Finished, InOrder};
use bcuda::gpu::HostBatch;
use bcuda::reads::{ReadBatch, ReadOptions};
use bcuda::sai::GapOptions;

#[derive(clap::Args, Debug)]
pub struct DealerSimArgs {
    /// Reads to align.
    #[arg(long, default_value_t = 64_000_000)]
    pub reads: u64,
    /// Reads per batch (aln's).
    #[arg(long, default_value_t = bcuda::aln::CPU_BATCH as u64)]
    pub batch: u64,
    /// One GPU's rate, reads per GPU-second (H100, 3.1 Gbp, 100 bp: 858k).
    #[arg(long, default_value_t = 858_000.0)]
    pub gpu_rate: f64,
    /// Parsing and packing, reads per second (the input pipeline as a whole).
    #[arg(long, default_value_t = 10_000_000.0)]
    pub parse_rate: f64,
    /// The writer (CPU completion and the .sai), reads per second.
    #[arg(long, default_value_t = 16_700_000.0)]
    pub write_rate: f64,
    /// GPU counts to run.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub gpus: Vec<usize>,
    /// How much slower GPU 0 is in the memory runs.
    #[arg(long, default_value_t = 4.0)]
    pub slow_factor: f64,
    /// Simulated seconds per real second.
    #[arg(long, default_value_t = 50.0)]
    pub speed: f64,
}

/// A simulated GPU: batches one after another at `rate` reads per (simulated) second.
struct SimGpu {
    seconds_per_read: f64,
    speed: f64,
    free_at: Instant,
}

impl AsyncAligner for SimGpu {
    type Batch = u64;
    type Flight = Instant;
    type Answer = ();
    fn submit(&mut self, reads: &mut u64) -> Result<Instant> {
        let start = self.free_at.max(Instant::now());
        self.free_at = start + Duration::from_secs_f64(*reads as f64 * self.seconds_per_read / self.speed);
        Ok(self.free_at)
    }
    fn collect(&mut self, done: Instant) -> Result<()> {
        std::thread::sleep(done.saturating_duration_since(Instant::now()));
        Ok(())
    }
    fn recover(&mut self, _: &anyhow::Error) {}
}

/// What one run gave: simulated seconds, the most batches the writer held, each GPU's batches.
struct Outcome {
    seconds: f64,
    most_held: usize,
    batches: Vec<usize>,
}

fn simulate(args: &DealerSimArgs, rates: &[f64]) -> Result<Outcome> {
    let speed = args.speed;
    let scaled = move |reads: u64, rate: f64| Duration::from_secs_f64(reads as f64 / rate / speed);
    let start = Instant::now();
    let mut gpus: Vec<SimGpu> =
        rates.iter().map(|&r| SimGpu { seconds_per_read: 1.0 / r, speed, free_at: start }).collect();
    let sizes: Vec<u64> =
        (0..args.reads.div_ceil(args.batch)).map(|i| args.batch.min(args.reads - i * args.batch)).collect();
    // The parser as aln runs it: ahead of the GPUs by two batches per GPU, at its rate.
    let (parsed_tx, parsed_rx) = sync_channel::<u64>(2 * rates.len());
    let parse_rate = args.parse_rate;
    let parser = std::thread::spawn(move || {
        let mut ready_at = Instant::now();
        for reads in sizes {
            ready_at += scaled(reads, parse_rate);
            std::thread::sleep(ready_at.saturating_duration_since(Instant::now()));
            if parsed_tx.send(reads).is_err() {
                break;
            }
        }
    });
    let (done_tx, done_rx) = sync_channel::<Finished<u64, ()>>(1);
    let write_rate = args.write_rate;
    let writer = std::thread::spawn(move || {
        let (mut order, mut most_held, mut busy_until) = (InOrder::new(), 0, Instant::now());
        for finished in done_rx {
            order.push(finished.seq, finished);
            most_held = most_held.max(order.held());
            while let Some(f) = order.pop() {
                busy_until = busy_until.max(Instant::now()) + scaled(f.batch, write_rate);
                std::thread::sleep(busy_until.saturating_duration_since(Instant::now()));
            }
        }
        most_held
    });
    let shares =
        dealer::deal(&mut gpus, parsed_rx.into_iter().map(|reads| Ok((reads as usize, reads))), done_tx, &|_, _| {})?;
    let most_held = writer.join().map_err(|_| anyhow::anyhow!("the writer panicked"))?;
    parser.join().map_err(|_| anyhow::anyhow!("the parser panicked"))?;
    Ok(Outcome {
        seconds: start.elapsed().as_secs_f64() * speed,
        most_held,
        batches: shares.iter().map(|s| s.batches).collect(),
    })
}

/// Host bytes of one batch of `reads` 100 bp reads as the pipeline holds it (the reads, and
/// their layout for the GPU).
fn batch_bytes(reads: usize) -> usize {
    let mut batch = ReadBatch::default();
    let opts = ReadOptions { sequence_only: true, ..Default::default() };
    for i in 0..reads {
        let bases: Vec<u8> = (0..100).map(|j| b"ACGT"[(i + j) % 4]).collect();
        batch.push(b"r", &bases, &[], 100, opts);
    }
    let host = HostBatch::new(&batch, &GapOptions::default(), true);
    let reads_bytes = batch.heap_bytes();
    let host_bytes = host.exact_words.capacity() * 4
        + host.exact_starts.capacity() * 8
        + host.lens.capacity() * 2
        + host.gpu_reads.capacity() * 4
        + host.starts.capacity() * 8
        + host.gpu_lens.capacity() * 2
        + host.max_diffs.capacity() * 4;
    reads_bytes + host_bytes
}

pub fn run(args: DealerSimArgs) -> Result<()> {
    println!(
        "# {} reads in batches of {}; GPU {:.0} reads/s, parser {:.0} reads/s, writer {:.0} reads/s; clock sped up {}x",
        args.reads, args.batch, args.gpu_rate, args.parse_rate, args.write_rate, args.speed
    );
    println!("gpus\tseconds\tspeedup\treads_per_s\tbatches_per_gpu\twriter_most_held");
    let mut one = None;
    for &n in &args.gpus {
        let out = simulate(&args, &vec![args.gpu_rate; n])?;
        let base = *one.get_or_insert(out.seconds);
        let batches: Vec<String> = out.batches.iter().map(usize::to_string).collect();
        println!(
            "{n}\t{:.2}\t{:.2}\t{:.0}\t{}\t{}",
            out.seconds,
            base / out.seconds,
            args.reads as f64 / out.seconds,
            batches.join(","),
            out.most_held
        );
    }
    let bytes = batch_bytes(args.batch as usize);
    println!(
        "# GPU 0 {}x slower than the others; one batch holds {:.1} MB of host memory",
        args.slow_factor,
        bytes as f64 / 1e6
    );
    println!("gpus\tseconds\tbatches_per_gpu\twindow\twriter_most_held\twriter_most_held_mb");
    for &n in args.gpus.iter().filter(|&&n| n > 1) {
        let mut rates = vec![args.gpu_rate; n];
        rates[0] /= args.slow_factor;
        let out = simulate(&args, &rates)?;
        let window = dealer::WINDOW_PER_SLOT * 2 * n;
        let batches: Vec<String> = out.batches.iter().map(usize::to_string).collect();
        println!(
            "{n}\t{:.2}\t{}\t{window}\t{}\t{:.0}",
            out.seconds,
            batches.join(","),
            out.most_held,
            (out.most_held * bytes) as f64 / 1e6
        );
    }
    Ok(())
}
