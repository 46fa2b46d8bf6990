//! `bcuda-dev variant-tuned`: installs a hand-edited cuda/inexact_match.cu as a GPU's tuned
//! kernels, so that `bcuda aln` runs it and `bcuda aln --no-tuned` the unmodified kernels: an
//! A/B of a kernel change on a CUDA host without rebuilding (`VARIANT=... bench/run speed`).
//! The file is the tuned-kernel store's own (`bcuda::gpu::tuned`), fingerprinted with the
//! kernels this binary holds, so `bcuda` built from the same commit takes it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use bcuda::gpu::tuned::Tuned;
use clap::Args;

#[derive(Args, Debug)]
pub struct VariantTunedArgs {
    /// The variant of cuda/inexact_match.cu.
    variant: PathBuf,
    /// The GPU model, as CUDA names it (with --cc; default: GPU 0's).
    #[arg(long, requires = "cc")]
    device: Option<String>,
    /// The GPU's compute capability, MAJOR.MINOR (with --device).
    #[arg(long, requires = "device", value_parser = compute_capability)]
    cc: Option<(i32, i32)>,
    /// Where to write the file (default: where aln looks for the GPU's tuned kernels).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

fn compute_capability(s: &str) -> Result<(i32, i32), String> {
    let parsed = s.split_once('.').and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
    parsed.ok_or_else(|| format!("'{s}' is not a compute capability MAJOR.MINOR, such as 9.0"))
}

/// Writes the file; prints its path on stdout (remove the file after the A/B).
pub fn run(args: VariantTunedArgs) -> Result<()> {
    let source =
        std::fs::read_to_string(&args.variant).with_context(|| format!("reading {}", args.variant.display()))?;
    let (device, cc) = match (args.device, args.cc) {
        (Some(device), Some(cc)) => (device, cc),
        _ => bcuda::gpu::gpu_model(0).context("naming GPU 0 (--device and --cc name a GPU model instead)")?,
    };
    let tuned = Tuned::variant(&device, cc, source);
    let path = match args.output {
        Some(path) => {
            tuned.save_at(&path)?;
            path
        }
        None => tuned.save()?,
    };
    eprintln!(
        "{} installed as the tuned kernels of {device} (sm_{}{}): {}",
        args.variant.display(),
        cc.0,
        cc.1,
        path.display()
    );
    println!("{}", path.display());
    Ok(())
}
