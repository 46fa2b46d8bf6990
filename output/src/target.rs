//! What a named output is: a regular file to replace whole, or something to write through.

use std::fs::{self, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// As Linux, which gives up (ELOOP) after 40 links.
const MAX_LINKS: usize = 40;

pub(crate) enum Target {
    /// Opened as `fopen(path, "w")` would and written through: a device, a FIFO, an open
    /// descriptor (`/dev/fd/N`, `/dev/stdout`), a file with other hard links, a folder (so
    /// that opening it fails as fopen does), a name ending in `/`.
    Direct,
    /// A regular file, or none yet: `file` is where the path's symlinks lead.
    Replace { file: PathBuf, existing: Option<Metadata> },
}

/// Follows `path`'s symlinks to what they name.
pub(crate) fn resolve(path: &Path) -> std::io::Result<Target> {
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Ok(Target::Direct);
    }
    let mut file = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&file) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && file.file_name().is_some() => {
                return Ok(Target::Replace { file, existing: None });
            }
            // fopen gets the same error.
            Err(_) => return Ok(Target::Direct),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if names_descriptor(&file) {
                return Ok(Target::Direct);
            }
            let link = fs::read_link(&file)?;
            file = file.parent().map_or_else(|| link.clone(), |dir| dir.join(&link));
            continue;
        }
        // Renaming over a file with other names would part it from them.
        if !kind.is_file() || meta.nlink() > 1 {
            return Ok(Target::Direct);
        }
        return Ok(Target::Replace { file, existing: Some(meta) });
    }
    Ok(Target::Direct)
}

/// A link in a process's descriptor table (`/proc/self/fd/1`, what `/dev/fd/N` and
/// `/dev/stdout` lead to): it names an open file, which may be a pipe with no path.
fn names_descriptor(link: &Path) -> bool {
    let dir = link.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::canonicalize(dir).is_ok_and(|dir| dir.starts_with("/proc") && dir.file_name().is_some_and(|n| n == "fd"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn replaced_file(path: &Path) -> Option<PathBuf> {
        match resolve(path).unwrap() {
            Target::Replace { file, .. } => Some(file),
            Target::Direct => None,
        }
    }

    #[test]
    fn symlinks_lead_to_their_final_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("sub/real.sai");
        fs::create_dir(dir.path().join("sub")).unwrap();
        symlink("sub/real.sai", dir.path().join("one")).unwrap();
        symlink(dir.path().join("one"), dir.path().join("two")).unwrap();
        // Dangling: the file is created where the link points, as fopen does.
        assert_eq!(replaced_file(&dir.path().join("two")), Some(real.clone()));
        fs::write(&real, b"x").unwrap();
        assert_eq!(replaced_file(&dir.path().join("two")), Some(real));
    }

    #[test]
    fn descriptors_fifos_and_folders_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        assert!(replaced_file(Path::new("/dev/fd/1")).is_none());
        assert!(replaced_file(Path::new("/proc/self/fd/2")).is_none());
        assert!(replaced_file(dir.path()).is_none());
        assert!(replaced_file(&dir.path().join("new/")).is_none());
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(replaced_file(&fifo).is_none());
        let loop_link = dir.path().join("loop");
        symlink(&loop_link, &loop_link).unwrap();
        assert!(replaced_file(&loop_link).is_none());
    }

    #[test]
    fn hard_linked_files_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, b"x").unwrap();
        assert_eq!(replaced_file(&a), Some(a.clone()));
        fs::hard_link(&a, dir.path().join("b")).unwrap();
        assert!(replaced_file(&a).is_none());
    }
}
