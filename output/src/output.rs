//! The writer of one output: standard output, a file written through, or a regular file
//! replaced whole when the writer commits.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::closed::ClosedPipe;
use crate::target::{self, Target};
use crate::temporary::Temporary;

const BUFFER: usize = 1 << 20;

pub struct Output {
    /// What errors call it: the path as the user gave it, or "standard output".
    name: String,
    /// `None` once committed.
    writer: Option<BufWriter<Destination>>,
    /// For a regular file: the temporary file written, and the file it replaces.
    replacing: Option<(Temporary, PathBuf)>,
}

enum Destination {
    Stdout(io::Stdout),
    File(File),
}

impl Output {
    /// A file; `None` or `-` is standard output.
    pub fn create(path: Option<&Path>) -> io::Result<Output> {
        match path {
            Some(path) if path.as_os_str() != "-" => Output::file(path),
            _ => Ok(Output::stdout()),
        }
    }

    pub fn stdout() -> Output {
        Output {
            name: "standard output".into(),
            writer: Some(BufWriter::with_capacity(BUFFER, Destination::Stdout(io::stdout()))),
            replacing: None,
        }
    }

    /// The file `path` names, reached as `fopen(path, "w")` would reach it. Errors name
    /// `path`, never the temporary file.
    pub fn file(path: &Path) -> io::Result<Output> {
        let name = path.display().to_string();
        let (file, replacing) = open(path).map_err(|e| named(&name, e))?;
        Ok(Output { name, writer: Some(BufWriter::with_capacity(BUFFER, Destination::File(file))), replacing })
    }

    /// Flushes and, for a regular file, syncs the temporary file and renames it over the
    /// target. An output dropped without this leaves no temporary file behind.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self.writer.take().expect("an output is committed once");
        let mut destination = writer.into_inner().map_err(|e| self.error(e.into_error()))?;
        destination.flush().map_err(|e| self.error(e))?;
        if let Some((temporary, file)) = self.replacing.take() {
            if let Destination::File(handle) = &destination {
                handle.sync_all().map_err(|e| self.error(e))?;
            }
            temporary.rename_to(&file).map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    fn writer(&mut self) -> &mut BufWriter<Destination> {
        self.writer.as_mut().expect("no writes after commit")
    }

    /// Errors name the output; a closed pipe is told apart (see `ClosedPipe`).
    fn error(&self, e: io::Error) -> io::Error {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return io::Error::new(e.kind(), ClosedPipe { output: self.name.clone() });
        }
        named(&self.name, e)
    }
}

fn named(name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {e}"))
}

/// The handle written, and for a regular file the temporary file and the file it replaces.
fn open(path: &Path) -> io::Result<(File, Option<(Temporary, PathBuf)>)> {
    let Target::Replace { file, existing } = target::resolve(path)? else {
        return Ok((open_as_fopen(path)?, None));
    };
    if existing.is_some() {
        // fopen's permission check, without truncating the file yet.
        OpenOptions::new().write(true).open(&file)?;
    }
    match (Temporary::create_beside(&file), &existing) {
        (Ok((temporary, handle)), _) => {
            if let Some(meta) = &existing {
                keep_owner_and_mode(&handle, meta)?;
            }
            Ok((handle, Some((temporary, file))))
        }
        // A file we may write in a folder we may not: fopen writes it in place.
        (Err(e), Some(_)) if e.kind() == io::ErrorKind::PermissionDenied => Ok((open_as_fopen(&file)?, None)),
        (Err(e), _) => Err(e),
    }
}

/// `fopen(path, "w")`: created with mode 0666 less the umask, truncated.
fn open_as_fopen(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create(true).truncate(true).open(path)
}

/// The replacement keeps the replaced file's mode, and its owner where we may set it (root).
fn keep_owner_and_mode(handle: &File, replaced: &Metadata) -> io::Result<()> {
    let _ = std::os::unix::fs::fchown(handle, Some(replaced.uid()), Some(replaced.gid()));
    handle.set_permissions(replaced.permissions())
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Destination::Stdout(w) => w.write(buf),
            Destination::File(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Destination::Stdout(w) => w.flush(),
            Destination::File(w) => w.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer().write(buf);
        written.map_err(|e| self.error(e))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let written = self.writer().write_all(buf);
        written.map_err(|e| self.error(e))
    }
    fn flush(&mut self) -> io::Result<()> {
        let flushed = self.writer().flush();
        flushed.map_err(|e| self.error(e))
    }
}

impl Drop for Output {
    /// Not committed (an error): what is still buffered is dropped, not written, so that a
    /// command that fails early writes nothing; a temporary file is removed.
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            let _ = writer.into_parts();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn uncommitted_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sai");
        {
            let mut out = Output::file(&target).unwrap();
            out.write_all(b"partial").unwrap();
        }
        assert!(files_in(dir.path()).is_empty());
    }

    #[test]
    fn committed_output_is_renamed_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sai");
        let mut out = Output::file(&target).unwrap();
        out.write_all(b"whole").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert_eq!(files_in(dir.path()), ["out.sai"]);
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sam");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut out = Output::file(&target).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn errors_name_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no/such/out.sai");
        let err = Output::file(&missing).err().unwrap().to_string();
        assert!(err.starts_with(&missing.display().to_string()) && !err.contains(".bcuda-"), "{err}");
        let folder = format!("{}/", dir.path().display());
        let err = Output::file(Path::new(&folder)).err().unwrap().to_string();
        assert!(err.starts_with(&folder), "{err}");
    }
}
