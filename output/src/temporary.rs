//! This process's temporary files: each created beside its target under a name no other
//! file has (O_EXCL), and listed until it is renamed into place or removed, so that a signal
//! can remove every one left.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Names tried before giving up: a stale file of a killed run may hold the first.
const ATTEMPTS: u32 = 100;

/// The temporary files that exist now. Creating, renaming and removing one happen under
/// the lock, so the signal thread, which takes it for good, sees every file there is.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A temporary file beside its target, removed when dropped unless renamed into place.
pub(crate) struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// Creates `dir/.name.bcuda-PID.tmp` beside `target` (mode 0666 less the umask, as
    /// fopen's files), or the first of `...bcuda-PID-N.tmp` that does not exist.
    pub(crate) fn create_beside(target: &Path) -> io::Result<(Temporary, File)> {
        let mut attempt = 0;
        loop {
            let path = name_beside(target, attempt);
            let mut live = live();
            match OpenOptions::new().write(true).create_new(true).mode(0o666).open(&path) {
                Ok(file) => {
                    live.push(path.clone());
                    return Ok((Temporary { path }, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt + 1 < ATTEMPTS => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames the file over `target`; on failure it is removed when dropped.
    pub(crate) fn rename_to(self, target: &Path) -> io::Result<()> {
        let mut live = live();
        std::fs::rename(&self.path, target)?;
        forget(&mut live, &self.path);
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut live = live();
        let _ = std::fs::remove_file(&self.path);
        forget(&mut live, &self.path);
    }
}

fn forget(live: &mut Vec<PathBuf>, path: &Path) {
    live.retain(|p| p != path);
}

/// Removes every temporary file and keeps the lock, so that none is created or renamed
/// after: for the signal thread, which exits next.
pub(crate) fn remove_all_for_good() -> MutexGuard<'static, Vec<PathBuf>> {
    let live = live();
    for path in live.iter() {
        let _ = std::fs::remove_file(path);
    }
    live
}

/// `dir/.name.bcuda-PID.tmp`, then `dir/.name.bcuda-PID-N.tmp`: hidden, and in the target's
/// folder so that the rename is atomic.
fn name_beside(target: &Path, attempt: u32) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!(".bcuda-{}", std::process::id()));
    if attempt > 0 {
        name.push(format!("-{attempt}"));
    }
    name.push(".tmp");
    target.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_file_under_our_name_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.sai");
        let stale = name_beside(&target, 0);
        std::fs::write(&stale, b"stale").unwrap();
        let (tmp, _file) = Temporary::create_beside(&target).unwrap();
        let path = tmp.path.clone();
        assert_eq!(path, name_beside(&target, 1));
        tmp.rename_to(&target).unwrap();
        assert_eq!(std::fs::read(&stale).unwrap(), b"stale");
        assert!(target.exists() && !live().contains(&path));
    }

    #[test]
    fn dropped_file_is_removed_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, _file) = Temporary::create_beside(&dir.path().join("x.bam")).unwrap();
        let path = tmp.path.clone();
        assert!(path.exists() && live().contains(&path));
        drop(tmp);
        assert!(!path.exists() && !live().contains(&path));
    }
}
