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
    /// Quiet: no progress on stderr.
    #[arg(short = 'q')]
    pub quiet: bool,
}

pub fn run(_args: IndexArgs) -> anyhow::Result<()> {
    anyhow::bail!("index: not implemented yet")
}
