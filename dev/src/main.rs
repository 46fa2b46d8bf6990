//! `bcuda-dev`: the tools used to develop and measure bcuda, kept out of the `bcuda` binary.
//! They reach the aligner through the `bcuda` library crate.

mod aln_flags;
mod candidates;
mod candidates_gpu;
mod copy_bench;
mod dealer_sim;
mod gpu_bench;
mod input_bench;
mod kernel_resources;
mod ladder_split;
mod launch_tail;
mod m_guard;
mod no_hit;
mod pop_order;
mod prune_bound;
mod replay;
mod stack_profile;
mod synth_genome;
mod variant_tuned;
mod warp_packing;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// The shell's status for a process that SIGPIPE ended (128 + 13), as `bcuda`'s.
const CLOSED_PIPE_STATUS: u8 = 141;

#[derive(Parser, Debug)]
#[command(
    name = "bcuda-dev",
    version,
    about = "Development tools for bcuda: benchmark genomes, CPU models of the GPU search, kernel timing"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// bwa's hits from candidate strings (pigeonhole searches) replayed in bwa's order, and their cost.
    Candidates(candidates::CandidatesArgs),
    /// How fast a large file (a .bwt) reaches the GPU, by each way start-up could copy it.
    CopyBench(copy_bench::CopyBenchArgs),
    /// aln's dealer and writer on simulated GPUs: speed-up with 1 to 8 GPUs, writer's memory.
    DealerSim(dealer_sim::DealerSimArgs),
    /// Time the exact_match kernel alone and check it against the CPU.
    GpuBench(gpu_bench::GpuBenchArgs),
    /// The candidates' enumeration on a GPU: timed over a FASTQ, checked against the CPU model.
    CandidatesGpu(candidates_gpu::CandidatesGpuArgs),
    /// Time parsing and packing reads (plain, gzip, BGZF, several files): the input-rate.tsv tables.
    InputBench(input_bench::InputBenchArgs),
    /// The inexact kernels' registers, stack and spills per team size (NVRTC's ptxas report).
    KernelResources(kernel_resources::KernelResourcesArgs),
    /// One rung of a speculative ladder played with whole `aln -n G` runs: the reads it answers and the rest.
    LadderSplit(ladder_split::LadderSplitArgs),
    /// How many reads a proof of no alignment within max_diff edits answers, and its lookups.
    NoHit(no_hit::NoHitArgs),
    /// Whether bwa's search finds its hits when bounded from the start by its first hit's top2 limit.
    PruneBound(prune_bound::PruneBoundArgs),
    /// Profile the search's stack per read and check the GPU's bounded stack on the CPU.
    StackProfile(stack_profile::StackProfileArgs),
    /// Writes a seeded synthetic genome (FASTA, stdout) for benchmarks.
    SynthGenome(synth_genome::SynthGenomeArgs),
    /// Install a hand-edited cuda/inexact_match.cu as a GPU's tuned kernels (an A/B against --no-tuned).
    VariantTuned(variant_tuned::VariantTunedArgs),
}

fn run() -> Result<()> {
    match Cli::parse().command {
        Command::Candidates(args) => candidates::run(args),
        Command::CopyBench(args) => copy_bench::run(args),
        Command::DealerSim(args) => dealer_sim::run(args),
        Command::GpuBench(args) => gpu_bench::run(args),
        Command::CandidatesGpu(args) => candidates_gpu::run(args),
        Command::InputBench(args) => input_bench::run(args),
        Command::KernelResources(args) => kernel_resources::run(args),
        Command::LadderSplit(args) => ladder_split::run(args),
        Command::NoHit(args) => no_hit::run(args),
        Command::PruneBound(args) => prune_bound::run(args),
        Command::StackProfile(args) => stack_profile::run(args),
        Command::SynthGenome(args) => synth_genome::run(args),
        Command::VariantTuned(args) => variant_tuned::run(args),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`| head`): nothing to say.
        Err(err) if err.chain().any(bcuda_output::is_closed_pipe) => ExitCode::from(CLOSED_PIPE_STATUS),
        Err(err) => {
            eprintln!("bcuda-dev: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
