//! `bcuda index`: build the BWA 0.7 index files of a FASTA.

#[derive(clap::Args, Debug)]
pub struct IndexArgs {
    /// Reference FASTA (plain or gzip; `-`: standard input, with -p).
    pub fasta: std::path::PathBuf,
    /// Prefix of the index files [same as the FASTA path; required for `-`].
    #[arg(short = 'p')]
    pub prefix: Option<std::path::PathBuf>,
    /// Accepted for compatibility with `bwa index -a` (is, bwtsw, rb2): bcuda has one
    /// construction, whose files are identical.
    #[arg(short = 'a')]
    pub algo: Option<String>,
    /// Memory for one chunk of suffix positions, in GiB (on the GPU, for the three chunks in
    /// flight): more means fewer passes over the text.
    #[arg(long, default_value_t = 2.0, allow_hyphen_values = true, value_parser = crate::option_values::sort_gib)]
    pub sort_memory: f64,
    /// Quiet: no progress on stderr.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Leave the default index as it is (by default the index built becomes it): for
    /// workflows, which name their index in every command.
    #[arg(long)]
    pub not_default: bool,
    /// Sort on the CPU even when a GPU is present.
    #[arg(long, conflicts_with = "gpu")]
    pub cpu: bool,
    /// Sort on the GPU; an error when no usable GPU is found (a GPU that fails during the
    /// build still hands its remaining chunks to the CPU).
    #[arg(long)]
    pub gpu: bool,
}

/// Shared slot for the GPU sorter's step times, filled once it is opened.
type GpuTimes =
    std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<std::sync::Mutex<crate::gpu::index_sort::GpuSortTimes>>>>>;

/// Threads the GPU path runs beside the build: opening the GPU, and compiling aln's kernels
/// into the kernel cache. `index` waits for them before it exits: CUDA and NVRTC are torn down
/// at exit, and a thread still inside them then crashes the process (seen on an H100 host,
/// one run in three on lambda, whose build ends before NVRTC does).
#[derive(Clone, Default)]
struct GpuThreads(std::sync::Arc<std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>>);

impl GpuThreads {
    fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        self.0.lock().unwrap().push(std::thread::spawn(f));
    }

    /// Joins every thread, those the joined ones started included.
    fn join_all(&self) {
        loop {
            let threads = std::mem::take(&mut *self.0.lock().unwrap());
            if threads.is_empty() {
                return;
            }
            threads.into_iter().for_each(|t| {
                let _ = t.join();
            });
        }
    }
}

/// The GPU sorter, opened (context, NVRTC) on a thread of `threads` while the FASTA is read,
/// unless `--cpu` or no CUDA driver (with `--gpu`, opened first: an error when it cannot be);
/// the slot of its step times; the slot of why it could not be opened.
#[allow(clippy::type_complexity)] // the three things gpu_sorter hands back, named in its doc comment
fn gpu_sorter(
    args: &IndexArgs,
    threads: &GpuThreads,
) -> anyhow::Result<(
    Option<bcuda_index::build::SorterSource>,
    GpuTimes,
    std::sync::Arc<std::sync::Mutex<Option<String>>>,
)> {
    use crate::gpu::index_sort::GpuChunkSorter;
    let times = GpuTimes::default();
    let error = std::sync::Arc::new(std::sync::Mutex::new(None));
    if args.cpu || (!args.gpu && !crate::gpu::driver_present()) {
        return Ok((None, times, error));
    }
    // The sorter goes through a channel, so that the thread is joined whether or not the build
    // asks for it.
    let (send, opened) = std::sync::mpsc::sync_channel(1);
    let warm = threads.clone();
    threads.spawn(move || {
        let sorter = GpuChunkSorter::open(0);
        // aln comes next: its kernels compile (NVRTC, seconds) into the PTX cache meanwhile.
        if let Ok(s) = &sorter {
            let arch = s.arch();
            warm.spawn(move || crate::gpu::warm_kernel_cache(arch));
        }
        let _ = send.send(sorter);
    });
    let opened = move || opened.recv().unwrap_or_else(|_| Err(anyhow::anyhow!("opening the GPU failed")));
    let opened: Box<dyn FnOnce() -> anyhow::Result<GpuChunkSorter> + Send> = if args.gpu {
        let sorter = opened().map_err(|e| e.context("index: no usable GPU"))?;
        Box::new(move || Ok(sorter))
    } else {
        Box::new(opened)
    };
    let (slot, failed) = (times.clone(), error.clone());
    let source: bcuda_index::build::SorterSource = Box::new(move || {
        let opened = opened();
        match opened {
            Ok(sorter) => {
                *slot.lock().unwrap() = Some(sorter.times());
                Ok(Box::new(sorter) as Box<dyn bcuda_index::chunk_sort::ChunkSorter>)
            }
            Err(e) => {
                *failed.lock().unwrap() = Some(format!("{e:#}"));
                Err(format!("GPU not usable: {e:#}").into())
            }
        }
    });
    Ok((Some(source), times, error))
}

/// Reports the sort's events: each chunk on the progress line (or a line of its own when
/// stderr is not a terminal), a fallback to the CPU, and where the time went.
fn sort_events(progress: crate::progress::Progress, quiet: bool) -> impl FnMut(&bcuda_index::suffix_sort::SortEvent) {
    use bcuda_index::chunk_sort::SortedOn;
    use bcuda_index::suffix_sort::SortEvent;
    let plain = !quiet && !std::io::IsTerminal::is_terminal(&std::io::stderr());
    move |event| match event {
        SortEvent::Fallback { chunk, reason } if !quiet => {
            let from = chunk.map_or("all chunks".to_string(), |c| format!("chunk {} and the rest", c + 1));
            crate::progress::note(&format!("[bcuda index] the GPU sort failed ({reason}); the CPU sorts {from}"));
        }
        SortEvent::Chunk(c) => {
            let secs = (c.sort_s + c.refine_s).max(1e-9);
            let on = if c.on == SortedOn::Sorter { "GPU" } else { "CPU" };
            let msg = format!(
                "chunk {}/{} on the {on}, {:.1} M suffixes, {:.2} GB/s",
                c.index + 1,
                c.count,
                c.positions as f64 / 1e6,
                c.positions as f64 * 8.0 / secs / 1e9
            );
            progress.set_message(msg.clone());
            if plain {
                eprintln!(
                    "[bcuda index] {msg} ({:.1} s sort, {:.1} s ties), {} rows done",
                    c.sort_s, c.refine_s, c.rows_done
                );
            }
        }
        SortEvent::Done(s) if !quiet => {
            let rate = s.sorter_positions as f64 * 8.0 / (s.sorter_s + s.refine_s).max(1e-9) / 1e9;
            crate::progress::note(&format!(
                "[bcuda index] suffixes sorted by {}: {} chunks there ({:.2} s, {:.2} GB/s of suffix array with the tie refinement, of which the CPU's refinement of tied 64-base keys {:.2} s), {} on the CPU ({:.2} s); beside: the cover sample ranked on the CPU in {:.2} s while the GPU took the text ({:.2} s){}; the row loop {:.2} s, waiting for sorted chunks {:.2} s",
                s.sorter, s.sorter_chunks, s.sorter_s, rate, s.refine_s, s.cpu_chunks, s.cpu_s, s.cover_s, s.prepare_s,
                if s.count_s > 0.0 { format!(", buckets counted on the CPU in {:.2} s", s.count_s) } else { String::new() },
                s.rows_s, s.wait_s
            ));
        }
        _ => {}
    }
}

pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    let summary = crate::summary::Summary::start("index");
    if let Some(algo) = &args.algo {
        if !matches!(algo.as_str(), "is" | "bwtsw" | "rb2") {
            anyhow::bail!("index: unknown algorithm '{algo}' for -a (bwa knows is, bwtsw, rb2)");
        }
    }
    if crate::input::is_stdin(&args.fasta) && args.prefix.is_none() {
        anyhow::bail!("index: the FASTA is standard input ('-'): name the index files with -p PREFIX");
    }
    let prefix = args.prefix.clone().unwrap_or_else(|| args.fasta.clone());
    // Progress in permille of suffix-array rows sorted.
    let progress = crate::progress::Progress::new("index", Some(1000), args.quiet);
    let bar = progress.clone();
    // Seconds per stage, for the summary: where the time went.
    let stages = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, std::time::Instant)>::new()));
    let seen = stages.clone();
    let gpu_threads = GpuThreads::default();
    let (sorter, gpu_times, gpu_error) = gpu_sorter(&args, &gpu_threads)?;
    let opts = bcuda_index::BuildOptions {
        sorter,
        events: Some(Box::new(sort_events(progress.clone(), args.quiet))),
        progress: Some(Box::new(move |stage: &str, fraction: f64| {
            let mut seen = seen.lock().unwrap();
            if seen.last().is_none_or(|(s, _)| s != stage) {
                seen.push((stage.to_string(), std::time::Instant::now()));
            }
            bar.advance(0, Some((fraction * 1000.0) as u64))
        })),
        sort_budget_bytes: (args.sort_memory * (1u64 << 30) as f64) as u64,
    };
    let start = std::time::Instant::now();
    let built = bcuda_index::build_index(&args.fasta, &prefix, opts);
    progress.finish();
    gpu_threads.join_all();
    if let (Some(e), true) = (gpu_error.lock().unwrap().take(), args.gpu) {
        built?;
        anyhow::bail!("index: no usable GPU ({e}); the files were written by the CPU build");
    }
    built?;
    if !args.quiet {
        if let Some(times) = gpu_times.lock().unwrap().as_ref() {
            let t = times.lock().unwrap();
            eprintln!(
                "[bcuda index] GPU steps: text copied in {:.2} s, buckets counted in {:.2} s, chunks sorted in {:.2} s ({} radix passes, {} skipped as constant), copied back in {:.2} s",
                t.upload_s, t.count_s, t.sort_s, t.passes, t.skipped_passes, t.download_s
            );
        }
        let stages = stages.lock().unwrap();
        let spent: Vec<String> =
            stages.windows(2).map(|w| format!("{} {:.2} s", w[0].0, (w[1].1 - w[0].1).as_secs_f64())).collect();
        eprintln!(
            "[bcuda index] {} indexed in {:.2} s ({})",
            crate::input::display_name(&args.fasta).display(),
            start.elapsed().as_secs_f64(),
            spent.join(", ")
        );
    }
    if !args.not_default {
        record_default(&prefix, args.quiet);
    }
    summary.print(Some(&prefix), indexed_bases(&prefix)?, "bases", args.quiet);
    Ok(())
}

/// Records the index built as the default. The index is built whatever happens here: a
/// config folder we cannot write is a warning.
fn record_default(prefix: &std::path::Path, quiet: bool) {
    match crate::default_index::record_default(prefix) {
        Ok(file) if !quiet => {
            eprintln!("[bcuda index] {} is now the default index ({})", prefix.display(), file.display())
        }
        Ok(_) => {}
        Err(e) => eprintln!("[bcuda index] warning: could not record {} as the default index: {e:#}", prefix.display()),
    }
}

/// The reference's length, the first number of PREFIX.ann (`l_pac n_seqs seed`).
fn indexed_bases(prefix: &std::path::Path) -> anyhow::Result<u64> {
    let ann = bcuda_index::with_ext(prefix, ".ann");
    let text = std::fs::read_to_string(&ann).map_err(|e| anyhow::anyhow!("{}: {e}", ann.display()))?;
    let first = text.split_whitespace().next().and_then(|w| w.parse().ok());
    first.ok_or_else(|| anyhow::anyhow!("{}: no length on its first line", ann.display()))
}
