//! The options of `aln`, `samse` and `sampe` that `map` passes through (`--aln '-l 1024'`),
//! parsed by the commands' own definitions so that they mean, and are checked, as there.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Parser;

use super::MapArgs;
use crate::aln::AlnArgs;
use crate::default_index::IndexChoice;
use crate::sampe::SampeArgs;
use crate::samse::SamseArgs;

#[derive(Parser)]
#[command(name = "--aln", no_binary_name = true)]
struct AlnLine {
    #[command(flatten)]
    args: AlnArgs,
}

#[derive(Parser)]
#[command(name = "--samse", no_binary_name = true)]
struct SamseLine {
    #[command(flatten)]
    args: SamseArgs,
}

#[derive(Parser)]
#[command(name = "--sampe", no_binary_name = true)]
struct SampeLine {
    #[command(flatten)]
    args: SampeArgs,
}

/// `options` split into words, then `positional`.
fn words(options: &str, positional: &[PathBuf]) -> Vec<String> {
    options.split_whitespace().map(String::from).chain(positional.iter().map(|p| p.display().to_string())).collect()
}

/// Whether `options` has the option `flag` (alone or with its value attached).
fn has(options: &str, flag: &str) -> bool {
    options.split_whitespace().any(|w| w.starts_with(flag))
}

/// aln's arguments: `--aln`'s options, the index and the reads, map's -t unless `--aln` has one.
pub fn aln(map: &MapArgs, index: &IndexChoice, reads: &[PathBuf]) -> Result<AlnArgs> {
    let positional = [index.prefix.clone(), reads[0].clone()];
    let mut args =
        AlnLine::try_parse_from(words(&map.aln, &positional)).map_err(|e| anyhow::anyhow!("--aln: {e}"))?.args;
    if args.output.is_some() {
        bail!("--aln: -f is not for map; --sai PREFIX writes the .sai");
    }
    if let (Some(t), false) = (map.threads, has(&map.aln, "-t")) {
        args.threads = i32::try_from(t).unwrap_or(i32::MAX);
    }
    args.quiet |= map.quiet;
    Ok(args)
}

/// samse's arguments from `--samse` (its -n; the read group is map's -R).
pub fn samse(map: &MapArgs) -> Result<SamseArgs> {
    let args = SamseLine::try_parse_from(words(&map.samse, &[".sai".into(), "reads".into()]))
        .map_err(|e| anyhow::anyhow!("--samse: {e}"))?
        .args;
    if args.read_group.is_some() || args.sam_file.is_some() || args.output.is_some() {
        bail!("--samse: -r, -f and -o are map's -R and -o");
    }
    Ok(args)
}

/// sampe's arguments from `--sampe`, with its -o as the maximum occurrences for pairing.
pub struct Sampe {
    pub args: SampeArgs,
    pub max_occ: i64,
}

pub fn sampe(map: &MapArgs) -> Result<Sampe> {
    let positional = ["1.sai", "2.sai", "1.fq", "2.fq"].map(PathBuf::from);
    let mut args =
        SampeLine::try_parse_from(words(&map.sampe, &positional)).map_err(|e| anyhow::anyhow!("--sampe: {e}"))?.args;
    args.quiet |= map.quiet;
    if args.read_group.is_some() || args.sam_file.is_some() {
        bail!("--sampe: -r and -f are map's -R and -o");
    }
    let (max_occ, output) = crate::sampe::max_occ_and_output(&args)?;
    if output.is_some() {
        bail!("--sampe: -o is the maximum occurrences for pairing here (an integer); the output is map's -o");
    }
    Ok(Sampe { args, max_occ })
}
