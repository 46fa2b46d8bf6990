//! `bcuda index`: build the BWA 0.7 index files of a FASTA.

#[derive(clap::Args, Debug)]
pub struct IndexArgs {
    /// Reference FASTA (plain or gzip).
    pub fasta: std::path::PathBuf,
    /// Prefix of the index files [same as the FASTA path].
    #[arg(short = 'p')]
    pub prefix: Option<std::path::PathBuf>,
    /// Accepted for compatibility with `bwa index -a` (is, bwtsw, rb2): bcuda has one construction, whose files are identical.
    #[arg(short = 'a')]
    pub algo: Option<String>,
    /// Memory for one chunk of suffix positions, in GiB: more means fewer passes over the text.
    #[arg(long, default_value_t = 2.0)]
    pub sort_memory: f64,
    /// Quiet: no progress on stderr.
    #[arg(short = 'q')]
    pub quiet: bool,
}

pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    if let Some(algo) = &args.algo {
        if !matches!(algo.as_str(), "is" | "bwtsw" | "rb2") {
            anyhow::bail!("index: unknown algorithm '{algo}' for -a (bwa knows is, bwtsw, rb2)");
        }
    }
    let prefix = args.prefix.clone().unwrap_or_else(|| args.fasta.clone());
    // Progress in permille of suffix-array rows sorted.
    let progress = crate::progress::Progress::new("index", Some(1000), args.quiet);
    let bar = progress.clone();
    // Seconds per stage, for the summary: where the time went.
    let stages = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, std::time::Instant)>::new()));
    let seen = stages.clone();
    let opts = bcuda_index::BuildOptions {
        progress: Some(Box::new(move |stage: &str, fraction: f64| {
            let mut seen = seen.lock().unwrap();
            if seen.last().is_none_or(|(s, _)| s != stage) {
                seen.push((stage.to_string(), std::time::Instant::now()));
            }
            bar.advance(0, Some((fraction * 1000.0) as u64))
        })),
        sort_budget_bytes: (args.sort_memory.max(0.001) * (1u64 << 30) as f64) as u64,
    };
    let start = std::time::Instant::now();
    let built = bcuda_index::build_index(&args.fasta, &prefix, opts);
    progress.finish();
    built?;
    if !args.quiet {
        let stages = stages.lock().unwrap();
        let spent: Vec<String> = stages.windows(2).map(|w| format!("{} {:.2} s", w[0].0, (w[1].1 - w[0].1).as_secs_f64())).collect();
        eprintln!("[bcuda index] {} indexed in {:.2} s ({})", args.fasta.display(), start.elapsed().as_secs_f64(), spent.join(", "));
    }
    // The index is built whatever happens here: a config folder we cannot write is a warning.
    match crate::default_index::record_default(&prefix) {
        Ok(file) if !args.quiet => eprintln!("[bcuda index] {} is now the default index ({})", prefix.display(), file.display()),
        Ok(_) => {}
        Err(e) => eprintln!("[bcuda index] warning: could not record {} as the default index: {e:#}", prefix.display()),
    }
    Ok(())
}
