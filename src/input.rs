//! Input files named on the command line, where `-` means standard input (as in bwa). A
//! command reads at most one of its inputs from standard input: there is only one.

pub mod chunks;
pub mod decompress;
#[cfg(feature = "isal")]
pub mod gzip;
pub mod ordered;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// True for `-`.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How messages name an input: `standard input` for `-`, else the path.
pub fn display_name(path: &Path) -> PathBuf {
    if is_stdin(path) {
        PathBuf::from("standard input")
    } else {
        path.to_path_buf()
    }
}

/// Opens `path`, or standard input for `-`; an error names the file.
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>> {
    if is_stdin(path) {
        return Ok(Box::new(std::io::stdin()));
    }
    // The io::Error in the message, not as a source: `{:#}` would print it twice.
    let file = File::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Box::new(file))
}

/// At most one of the `(role, path)` inputs may be `-`.
pub fn at_most_one_stdin(inputs: &[(&str, &Path)]) -> Result<()> {
    let roles: Vec<&str> = inputs.iter().filter(|(_, p)| is_stdin(p)).map(|(role, _)| *role).collect();
    if roles.len() > 1 {
        bail!("'-' (standard input) is given for {}: only one input can come from standard input", roles.join(" and "));
    }
    Ok(())
}

/// Standard input copied into an unnamed temporary file (removed by the system whatever
/// happens), rewound: for commands that read their input twice.
pub fn spool_stdin() -> Result<File> {
    use std::io::{Seek, SeekFrom};
    let mut file = tempfile::tempfile().context("a temporary file for standard input")?;
    std::io::copy(&mut std::io::stdin().lock(), &mut file).context("copying standard input to a temporary file")?;
    file.seek(SeekFrom::Start(0)).context("rewinding the copy of standard input")?;
    Ok(file)
}

/// Standard input copied into a named temporary file (removed when dropped): for inputs
/// that another process reads by name.
pub fn spool_stdin_named() -> Result<tempfile::NamedTempFile> {
    let mut file = tempfile::NamedTempFile::new().context("a temporary file for standard input")?;
    std::io::copy(&mut std::io::stdin().lock(), &mut file).context("copying standard input to a temporary file")?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_stdin_at_most() {
        let (dash, file) = (Path::new("-"), Path::new("r.fq"));
        assert!(at_most_one_stdin(&[("SAI", dash), ("READS", file)]).is_ok());
        let err = at_most_one_stdin(&[("SAI", dash), ("READS", dash)]).unwrap_err().to_string();
        assert!(err.contains("SAI and READS"), "{err}");
        assert_eq!(display_name(dash), PathBuf::from("standard input"));
    }
}
