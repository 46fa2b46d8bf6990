//! `bcuda samse`: .sai to SAM/BAM, as `bwa samse`.

#[derive(clap::Args, Debug)]
pub struct SamseArgs {}

pub fn run(_args: SamseArgs) -> anyhow::Result<()> {
    anyhow::bail!("samse: not implemented yet")
}
