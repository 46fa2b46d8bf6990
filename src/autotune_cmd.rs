//! `bcuda autotune`: evolve the CUDA kernels for the installed GPU.
//!
//! The engine (grammar, patches, operators, tabu, selection) is the `bcuda-autotune` crate;
//! what is still missing here is the GPU evaluator (compile each variant, run it in a worker
//! process on a real batch, penalty against the reference kernel, GPU-event timing), the
//! held-out validation and the per-GPU save that `bcuda aln` would load.

use bcuda_autotune::genome::{Genome, SwitchSpec};

use crate::gpu::Switches;

#[derive(clap::Args, Debug)]
pub struct AutotuneArgs {
    /// Sample reads (FASTQ) to tune on.
    #[arg(long)]
    pub reads: Option<std::path::PathBuf>,
}

pub fn run(_args: AutotuneArgs) -> anyhow::Result<()> {
    anyhow::bail!("autotune: the GPU evaluator is not built yet (the evolution engine is, in the bcuda-autotune crate); see README, 'Autotuning'")
}

/// The kernel switches of a genome, as the GPU driver takes them; `Err` when they cannot run.
pub fn switches_of(genome: &Genome, specs: &[SwitchSpec]) -> Result<Switches, String> {
    let mut sw = Switches::default();
    sw.cache_threads = None;
    for (spec, value) in specs.iter().zip(&genome.switches) {
        let text = value.map_or("unset".to_string(), |v| v.to_string());
        sw.set(&format!("{}={text}", spec.name))?;
    }
    match sw.illegal() {
        Some(why) => Err(why.to_string()),
        None => Ok(sw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcuda_autotune::genome::{barracuda_switches, mutate};
    use bcuda_autotune::grammar::Grammar;
    use bcuda_autotune::patch::apply;
    use rand::SeedableRng;

    /// Variants that the operators generate from exact_match.cu compile with NVRTC (when it
    /// is present): the grammar's typing and scope rules keep them well formed.
    #[test]
    fn generated_variants_compile_with_nvrtc() {
        if !crate::gpu::nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (CI installs it from PyPI; see .ci/run)");
            return;
        }
        let g = Grammar::parse(crate::gpu::EXACT_MATCH_CU);
        let specs = barracuda_switches();
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let (mut compiled, mut illegal) = (0, 0);
        for _ in 0..40 {
            let mut genome = Genome::reference(&specs);
            for _ in 0..6 {
                genome = mutate(&genome, &specs, &g, &mut rng);
            }
            let Ok(sw) = switches_of(&genome, &specs) else {
                illegal += 1;
                continue;
            };
            let source = apply(&g, &genome.patches);
            crate::gpu::compile(&source, &sw.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{genome:?}\n{e}"));
            compiled += 1;
        }
        assert!(compiled >= 20, "only {compiled} legal variants ({illegal} illegal)");
    }
}
