//! SAM or BAM: the format an output file's name asks for.

use std::path::Path;

use anyhow::{bail, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Sam,
    Bam,
}

impl Format {
    /// What `-o NAME` asks for, by its extension in any case: BAM for `.bam`, SAM otherwise.
    /// A format bcuda does not write (CRAM, compressed SAM) is an error: plain SAM under
    /// such a name would only fail later, in the program that reads it.
    pub fn from_name(path: &Path) -> Result<Format> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("bam") => Ok(Format::Bam),
            Some("cram") => {
                bail!(
                    "{}: CRAM output is not supported; write BAM (-o NAME.bam), or SAM and convert it with samtools",
                    path.display()
                )
            }
            Some("gz" | "bgz" | "bgzf" | "bz2" | "xz" | "zst") => {
                bail!(
                    "{}: compressed SAM is not supported; write BAM (-o NAME.bam), or SAM to standard output and compress that",
                    path.display()
                )
            }
            _ => Ok(Format::Sam),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_in_any_case() {
        for (name, format) in [
            ("x.bam", Format::Bam),
            ("x.BAM", Format::Bam),
            ("x.Bam", Format::Bam),
            ("x.sam", Format::Sam),
            ("x", Format::Sam),
            ("-", Format::Sam),
        ] {
            assert_eq!(Format::from_name(Path::new(name)).unwrap(), format, "{name}");
        }
    }

    #[test]
    fn formats_not_written_are_refused() {
        for name in ["x.cram", "x.CRAM", "x.sam.gz", "x.SAM.GZ", "x.bam.gz", "x.sam.bz2", "x.sam.zst"] {
            let err = Format::from_name(Path::new(name)).unwrap_err().to_string();
            assert!(err.starts_with(name) && err.contains("not supported"), "{err}");
        }
    }
}
