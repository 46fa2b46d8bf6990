//! `bcuda-dev kernel-resources`: ptxas's registers, stack and spills of the inexact kernels, as
//! NVRTC compiles them for `aln` (one compilation per team size, and the no-hit pass's when
//! `no_hit_budget` turns it on), without a GPU. A change to the team kernel that adds registers
//! can cost a resident team per SM (pass 2's one-warp teams fit an SM by registers), so this is
//! the first check of such a change.

use anyhow::{bail, Result};
use bcuda::gpu::candidates::{self, CandidateSearch};
use bcuda::gpu::rungs;
use bcuda::gpu::{no_hit, nvrtc_present, resource_usage, InexactSwitches, INEXACT_MATCH_CU};

/// The real architectures NVRTC is asked for here.
const ARCHS: [&str; 7] = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"];

#[derive(clap::Args, Debug)]
pub struct KernelResourcesArgs {
    /// Inexact switches over the defaults, as `name=value` (repeatable).
    #[arg(long = "switch")]
    pub switches: Vec<String>,
    /// The architecture to compile for (a real one: sm_80, sm_90, ...).
    #[arg(long, default_value = "sm_90", value_parser = ARCHS)]
    pub arch: String,
    /// Also the candidates' kernels (cuda/candidates.cu, counting from the sectors).
    #[arg(long)]
    pub candidates: bool,
    /// The team kernels with the ladder's rungs and their `-m` guard, these guesses (e.g. 2,3;
    /// the test hook BCUDA_TEST_LADDER's).
    #[arg(long, value_delimiter = ',')]
    pub rungs: Vec<i32>,
}

pub fn run(args: KernelResourcesArgs) -> Result<()> {
    if !nvrtc_present() {
        bail!("no NVRTC found (libnvrtc could not be loaded)");
    }
    let mut switches = InexactSwitches::default();
    for s in &args.switches {
        switches.set(s).map_err(anyhow::Error::msg)?;
    }
    if let Some(why) = switches.illegal() {
        bail!("inexact kernel switches: {why}");
    }
    let Some(&arch) = ARCHS.iter().find(|&&a| a == args.arch) else { bail!("unknown architecture {}", args.arch) };
    let source = if args.rungs.is_empty() { INEXACT_MATCH_CU.to_string() } else { rungs::in_passes_source() };
    for (team, mut defines) in switches.modules() {
        if !args.rungs.is_empty() {
            defines.push(rungs::rungs_define(&args.rungs)?);
        }
        println!("teams of {team} threads ({}):", defines.join(" "));
        print_usage(&resource_usage(&source, &defines, arch)?);
    }
    if args.candidates {
        let defines = CandidateSearch::defines(true, 0);
        println!("the candidates ({}):", defines.join(" "));
        print_usage(&resource_usage(candidates::CANDIDATES_CU, &defines, arch)?);
    }
    if switches.no_hit_budget > 0 {
        let defines = no_hit::defines(&switches);
        println!("the no-hit pass ({}):", defines.join(" "));
        print_usage(&resource_usage(no_hit::NO_HIT_CU, &defines, arch)?);
    }
    Ok(())
}

/// Each entry function's lines of ptxas's report (registers, stack, spills).
fn print_usage(log: &str) {
    let mut function = String::new();
    for line in log.lines() {
        if let Some(name) = line.split('\'').nth(1).filter(|_| line.contains("Compiling entry function")) {
            function = name.to_string();
        } else if line.contains("Used") || line.contains("spill") {
            let what = line.trim_start_matches("ptxas").trim_start_matches(" info").trim_start_matches([' ', ':', '.']);
            println!("  {function}: {what}");
        }
    }
}
