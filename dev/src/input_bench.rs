//! `bcuda-dev input-bench`: how fast reads are parsed and packed for the GPU, the work `aln`
//! does on the host before a batch can go to a GPU. From one plain FASTQ it writes the same
//! reads gzip'd, BGZF-compressed and split in four files (untimed), then times each input
//! through the reader and the packer as `aln` runs them (two stages on threads of their
//! own), and prints a table whose rows fit the `input-rate.tsv` tables of `bench/results/`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use bcuda::gpu::HostBatch;
use bcuda::reads::{ReadBatch, ReadBatchReader, ReadOptions};
use bcuda::sai::GapOptions;

#[derive(clap::Args, Debug)]
pub struct InputBenchArgs {
    /// Plain FASTQ to measure on (its gzip, BGZF and four-file forms are written beside it in
    /// `--work`).
    pub reads: PathBuf,
    /// Folder for the derived inputs [a temporary folder, removed afterwards].
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Inputs to time, among plain, gzip, bgzf, plain-4files.
    #[arg(long, value_delimiter = ',', default_value = "plain,gzip,bgzf,plain-4files")]
    pub inputs: Vec<String>,
    /// Timed runs of each input; the table has the fastest.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Reads per batch (aln's CPU batch by default).
    #[arg(long, default_value_t = bcuda::aln::CPU_BATCH)]
    pub batch_size: usize,
    /// Time the parser alone, without the packer.
    #[arg(long)]
    pub parse_only: bool,
    /// Time the one-thread stages alone (reading, decompressing, cutting into chunks of whole
    /// records): the ceiling of the parallel parse. Reads are counted as lines / 4.
    #[arg(long, conflicts_with = "parse_only")]
    pub cut_only: bool,
}

pub fn run(args: InputBenchArgs) -> Result<()> {
    let tmp;
    let work = match &args.work {
        Some(dir) => dir.clone(),
        None => {
            tmp = tempfile_dir()?;
            tmp.clone()
        }
    };
    std::fs::create_dir_all(&work).with_context(|| work.display().to_string())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let commit = git_commit();
    println!("input\tcores\treads\treads_per_s\tcommit");
    for input in &args.inputs {
        let files = derived_input(&args.reads, &work, input)?;
        let mut best: Option<(u64, Duration)> = None;
        for _ in 0..args.repeats.max(1) {
            let (reads, took) = if args.cut_only {
                time_cutting(&files)?
            } else {
                time_input(&files, args.batch_size, args.parse_only)?
            };
            if best.is_none_or(|(_, t)| took < t) {
                best = Some((reads, took));
            }
        }
        let (reads, took) = best.expect("at least one run");
        println!("{input}\t{cores}\t{reads}\t{:.0}\t{commit}", reads as f64 / took.as_secs_f64());
    }
    if args.work.is_none() {
        std::fs::remove_dir_all(&work).ok();
    }
    Ok(())
}

/// A fresh folder under the system's temporary folder.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("bcuda-input-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The files of `input` (written into `work` when missing).
fn derived_input(plain: &Path, work: &Path, input: &str) -> Result<Vec<PathBuf>> {
    let stem = work.join("reads");
    match input {
        "plain" => Ok(vec![plain.to_path_buf()]),
        "gzip" => {
            let path = stem.with_extension("fq.gz");
            if !path.exists() {
                let file = std::fs::File::create(&path)?;
                copy_into(plain, flate2::write::GzEncoder::new(file, flate2::Compression::default()), |e| {
                    e.finish().map(drop)
                })?;
            }
            Ok(vec![path])
        }
        "bgzf" => {
            let path = stem.with_extension("bgzf.fq.gz");
            if !path.exists() {
                let file = std::fs::File::create(&path)?;
                copy_into(plain, noodles::bgzf::io::Writer::new(file), |mut w| w.try_finish())?;
            }
            Ok(vec![path])
        }
        "plain-4files" => split_in_four(plain, work),
        other => anyhow::bail!("unknown input '{other}' (plain, gzip, bgzf, plain-4files)"),
    }
}

fn copy_into<W: Write>(plain: &Path, mut out: W, finish: impl FnOnce(W) -> std::io::Result<()>) -> Result<()> {
    std::io::copy(&mut std::fs::File::open(plain).with_context(|| plain.display().to_string())?, &mut out)?;
    finish(out)?;
    Ok(())
}

/// `plain` cut in four files of whole records (four lines each), in order.
fn split_in_four(plain: &Path, work: &Path) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = (1..=4).map(|i| work.join(format!("part{i}.fq"))).collect();
    if paths.iter().all(|p| p.exists()) {
        return Ok(paths);
    }
    let lines = BufReader::new(std::fs::File::open(plain)?).lines().count();
    let per_file = (lines / 4).div_ceil(4) * 4;
    let mut input = BufReader::new(std::fs::File::open(plain)?);
    let mut line = Vec::new();
    for path in &paths {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for _ in 0..per_file {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            out.write_all(&line)?;
        }
        out.flush()?;
    }
    Ok(paths)
}

/// Reads `files` as one input through the parser and (unless `parse_only`) the packer, each
/// on a thread as in `aln` (the packer handing each batch back to be read into again, as
/// `aln`'s writer does); returns the reads and the wall time, and prints to stderr how long the
/// two one-thread stages were busy (taking batches from the reader; packing), in all and on
/// the CPU (waits left out): on many cores one of them, or the reading thread (`--cut-only`),
/// sets the pace.
fn time_input(files: &[PathBuf], batch_size: usize, parse_only: bool) -> Result<(u64, Duration)> {
    let started = Instant::now();
    let opts = ReadOptions { sequence_only: true, ..Default::default() };
    let (tx, rx) = sync_channel::<ReadBatch>(1);
    let (spent_tx, spent) = sync_channel::<ReadBatch>(bcuda::aln::SPARE_BATCHES);
    let packer = std::thread::spawn(move || {
        let opt = GapOptions::default();
        let (mut reads, mut busy, cpu_before) = (0u64, Duration::ZERO, thread_cpu());
        for batch in rx {
            let t = Instant::now();
            reads += batch.len() as u64;
            if !parse_only {
                std::hint::black_box(HostBatch::new(&batch, &opt, true));
            }
            busy += t.elapsed();
            let _ = spent_tx.try_send(batch);
        }
        (reads, busy, thread_cpu().saturating_sub(cpu_before))
    });
    let cpu_before = thread_cpu();
    let mut reader = ReadBatchReader::open_all(files, opts)?;
    let mut reading = Duration::ZERO;
    loop {
        let t = Instant::now();
        let mut batch = spent.try_recv().unwrap_or_default();
        reader.next_batch_into(&mut batch, batch_size)?;
        reading += t.elapsed();
        if batch.is_empty() || tx.send(batch).is_err() {
            break;
        }
    }
    let reading_cpu = thread_cpu().saturating_sub(cpu_before);
    drop(tx);
    let (reads, packing, packing_cpu) = packer.join().map_err(|_| anyhow::anyhow!("the packer panicked"))?;
    let took = started.elapsed();
    eprintln!(
        "{:.3} s: taking batches {:.3} s ({:.3} s on the CPU; waits for parsed chunks left out), packing {:.3} s ({:.3} s on the CPU)",
        took.as_secs_f64(),
        reading.as_secs_f64(),
        reading_cpu.as_secs_f64(),
        packing.as_secs_f64(),
        packing_cpu.as_secs_f64(),
    );
    Ok((reads, took))
}

/// The time the calling thread has run on a CPU (Linux's schedstat; zero elsewhere).
fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// Reads `files` through decompression and the chunker only.
fn time_cutting(files: &[PathBuf]) -> Result<(u64, Duration)> {
    let started = Instant::now();
    let mut lines = 0;
    for file in files {
        let (stream, _) = bcuda::input::decompress::decompressed_file(std::fs::File::open(file)?)?;
        let mut chunker = bcuda::input::chunks::Chunker::new(stream, Box::new(|| 0));
        let recycler = chunker.recycler();
        while let Some(chunk) = chunker.next_chunk()? {
            lines += bcuda::input::chunks::count_newlines(chunk.bytes()) as u64;
            let _ = recycler.try_send(chunk.into_buffer());
        }
    }
    Ok((lines / 4, started.elapsed()))
}
