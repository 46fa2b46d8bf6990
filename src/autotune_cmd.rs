//! `bcuda autotune`: evolve the CUDA kernels for the installed GPU.

#[derive(clap::Args, Debug)]
pub struct AutotuneArgs {}

pub fn run(_args: AutotuneArgs) -> anyhow::Result<()> {
    anyhow::bail!("autotune: not implemented yet")
}
