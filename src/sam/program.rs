//! The @PG line: bcuda's name, version and command line. bwa's CL is its argv; ours names
//! the index even when the command used the default one (argv lacks it then), so that the
//! header always says which reference the records are against.

use std::path::Path;

use crate::default_index::{IndexChoice, Origin};

/// `@PG\tID:bcuda\tPN:bcuda\tVN:...\tCL:...` (no newline).
pub fn pg_line(index: &IndexChoice) -> String {
    let argv: Vec<String> = std::env::args().collect();
    format!("@PG\tID:bcuda\tPN:bcuda\tVN:{}\tCL:{}", env!("CARGO_PKG_VERSION"), command_line(&argv, index))
}

/// `argv` joined by spaces (as bwa), with a default index put back as the first argument of
/// the subcommand: `bcuda samse x.sai x.fq` reads `bcuda samse /data/ref.fa x.sai x.fq`, a
/// command line that gives the same records.
fn command_line(argv: &[String], index: &IndexChoice) -> String {
    let mut words = argv.to_vec();
    if index.origin != Origin::Argument && words.len() >= 2 {
        words.insert(2, absolute(&index.prefix));
    }
    words.join(" ")
}

/// The prefix as an absolute path (a `BCUDA_INDEX` may be relative), as given if that fails.
fn absolute(prefix: &Path) -> String {
    std::path::absolute(prefix).unwrap_or_else(|_| prefix.to_path_buf()).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_named_index_leaves_argv_as_it_is() {
        let index = IndexChoice { prefix: PathBuf::from("ref.fa"), origin: Origin::Argument };
        assert_eq!(
            command_line(&argv(&["bcuda", "samse", "-n", "5", "ref.fa", "x.sai", "x.fq"]), &index),
            "bcuda samse -n 5 ref.fa x.sai x.fq"
        );
    }

    #[test]
    fn a_default_index_is_named_first() {
        let index = IndexChoice { prefix: PathBuf::from("/data/ref.fa"), origin: Origin::Environment };
        assert_eq!(
            command_line(&argv(&["bcuda", "samse", "-n", "5", "x.sai", "x.fq"]), &index),
            "bcuda samse /data/ref.fa -n 5 x.sai x.fq"
        );
    }
}
