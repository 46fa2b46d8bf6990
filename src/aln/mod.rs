//! `bcuda aln`: BWA's aln algorithm on the CPU (the correctness oracle).

#[derive(clap::Args, Debug)]
pub struct AlnArgs {}

pub fn run(_args: AlnArgs) -> anyhow::Result<()> {
    anyhow::bail!("aln: not implemented yet")
}
