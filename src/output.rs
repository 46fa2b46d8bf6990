//! Output files that never appear half-written: data goes to a temporary file beside the
//! target, which is renamed over it only when the writer is committed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where a command's main output goes: a file (atomic) or standard output.
pub enum Output {
    File { tmp: PathBuf, target: PathBuf, writer: BufWriter<File> },
    Stdout(BufWriter<io::Stdout>),
}

impl Output {
    /// `None` or `-` means standard output.
    pub fn create(path: Option<&Path>) -> io::Result<Output> {
        match path {
            None => Ok(Output::Stdout(BufWriter::with_capacity(1 << 20, io::stdout()))),
            Some(p) if p.as_os_str() == "-" => Ok(Output::Stdout(BufWriter::with_capacity(1 << 20, io::stdout()))),
            Some(p) => {
                let tmp = temp_path_for(p);
                let file = File::create(&tmp).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))?;
                Ok(Output::File { tmp, target: p.to_path_buf(), writer: BufWriter::with_capacity(1 << 20, file) })
            }
        }
    }

    /// Flushes and, for a file, renames the temporary file over the target.
    /// After a successful rename, `Drop` finds no temporary file left to remove.
    pub fn commit(mut self) -> io::Result<()> {
        match &mut self {
            Output::Stdout(w) => w.flush(),
            Output::File { tmp, target, writer } => {
                writer.flush()?;
                writer.get_ref().sync_all()?;
                std::fs::rename(&*tmp, &*target)
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::File { writer, .. } => writer.write(buf),
            Output::Stdout(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::File { writer, .. } => writer.write_all(buf),
            Output::Stdout(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File { writer, .. } => writer.flush(),
            Output::Stdout(w) => w.flush(),
        }
    }
}

impl Drop for Output {
    /// An output dropped without `commit` (an error path) leaves no file behind, and on
    /// standard output what is still buffered (at least the first MiB) is dropped rather
    /// than flushed: a command that fails early writes nothing.
    fn drop(&mut self) {
        match self {
            Output::File { tmp, .. } => {
                let _ = std::fs::remove_file(tmp);
            }
            Output::Stdout(w) => {
                let _ = std::mem::replace(w, BufWriter::with_capacity(0, io::stdout())).into_parts();
            }
        }
    }
}

/// `dir/.name.bcuda-<pid>.tmp`: same directory, so the rename is atomic.
pub fn temp_path_for(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = format!(".{name}.bcuda-{}.tmp", std::process::id());
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncommitted_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sai");
        {
            let mut out = Output::create(Some(&target)).unwrap();
            out.write_all(b"partial").unwrap();
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn committed_output_is_renamed_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sai");
        let mut out = Output::create(Some(&target)).unwrap();
        out.write_all(b"whole").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
