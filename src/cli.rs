//! Command-line interface: one subcommand per pipeline stage, named as in `bwa`.
//! Each subcommand's arguments and entry point live in its own module.

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "bcuda",
    version,
    about = "GPU short-read aligner, compatible with BWA 0.7.17 (index / aln / samse / sampe)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build the BWA 0.7 FM-index (.pac .ann .amb .bwt .sa) of a FASTA file.
    Index(crate::index_cmd::IndexArgs),
    /// Align reads with BWA's aln algorithm; writes a binary .sai.
    Aln(crate::aln::AlnArgs),
    /// Turn a .sai into SAM/BAM records, as `bwa samse`.
    Samse(crate::samse::SamseArgs),
    /// Cut a read file into N consecutive shards on record boundaries (to align apart).
    ///
    /// Shard 1 gets the first reads, the last shard the last ones, so that `merge-sai` of the
    /// shards' .sai files gives the .sai of the whole file. The input is read twice (count, copy).
    SplitReads(crate::split_reads::SplitReadsArgs),
    /// Join the .sai files of consecutive shards into the .sai of the whole read file.
    ///
    /// The shards must have been aligned with the same `aln` options (their headers are
    /// compared); only -t may differ, and the first shard's header is kept. The records are
    /// copied unchanged, so the result is byte for byte one `aln` over the whole read file.
    MergeSai(crate::merge_sai::MergeSaiArgs),
    /// Turn the two .sai files of paired reads into SAM/BAM records, as `bwa sampe`.
    Sampe(crate::sampe::SampeArgs),
    /// Reads to SAM or BAM in one command: aln of each end, then samse or sampe, the .sai in
    /// memory; BAM sorted and indexed with --sort.
    Map(crate::map::MapArgs),
    /// Evolve the CUDA kernels for the installed GPU.
    Autotune(crate::autotune_cmd::AutotuneArgs),
    /// Evaluates kernel variants for `autotune` (internal).
    #[command(hide = true)]
    AutotuneWorker(crate::autotune_cmd::WorkerArgs),
}

pub fn run() -> Result<()> {
    match Cli::parse().command {
        Command::Index(args) => crate::index_cmd::run(args),
        Command::Aln(args) => crate::aln::run(args),
        Command::Samse(args) => crate::samse::run(args),
        Command::SplitReads(args) => crate::split_reads::run(args),
        Command::MergeSai(args) => crate::merge_sai::run(args),
        Command::Sampe(args) => crate::sampe::run(args),
        Command::Map(args) => crate::map::run(args),
        Command::Autotune(args) => crate::autotune_cmd::run(args),
        Command::AutotuneWorker(args) => crate::autotune_cmd::run_worker(args),
    }
}
