//! bwa aln's search options as the dev tools take them (`-n`, `-o`, `-l`, `-m`).

use anyhow::Result;
use bcuda::sai::GapOptions;

#[derive(clap::Args, Debug)]
pub struct AlnFlags {
    /// bwa's `-m`: the most entries on the stack before the search stops.
    #[arg(short = 'm', long, default_value_t = GapOptions::default().max_entries)]
    pub max_entries: i32,
    /// bwa's `-n`: maximum differences (integer) or missing probability (with a '.').
    #[arg(short = 'n', default_value = "0.04", value_parser = bcuda::option_values::max_diff)]
    pub max_diff: String,
    /// bwa's `-o`: maximum gap opens.
    #[arg(short = 'o', default_value_t = GapOptions::default().max_gapo)]
    pub max_gapo: i32,
    /// bwa's `-l`: seed length.
    #[arg(short = 'l', default_value_t = GapOptions::default().seed_len)]
    pub seed_len: i32,
}

impl AlnFlags {
    /// bwa's options as `aln` takes them from these flags.
    pub fn gap_options(&self) -> Result<GapOptions> {
        let mut opt = GapOptions { max_entries: self.max_entries, ..GapOptions::default() };
        if self.max_diff.contains('.') {
            (opt.fnr, opt.max_diff) = (self.max_diff.parse()?, -1);
        } else {
            (opt.fnr, opt.max_diff) = (-1.0, self.max_diff.parse()?);
        }
        (opt.max_gapo, opt.seed_len) = (self.max_gapo, self.seed_len);
        Ok(opt)
    }
}
