//! Errors of index building and loading: each names the file and what is wrong with it.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The io::Error is part of the message, not a `source`: anyhow's `{:#}` would print it twice.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: index file is missing (build it with `bcuda index` or `bwa index`)")]
    Missing { path: PathBuf },
    #[error("{path}: truncated index file: {detail}")]
    Truncated { path: PathBuf, detail: String },
    #[error("{path}: corrupt index file: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("{path}: does not belong to the same index: {detail}")]
    Mismatch { path: PathBuf, detail: String },
    /// Writing an index file: the error names the file.
    #[error("{0}")]
    Output(std::io::Error),
    #[error("{path}: {detail}")]
    BadFasta { path: PathBuf, detail: String },
}

impl IndexError {
    /// Reading a file (the FASTA).
    pub(crate) fn io(path: &Path, error: std::io::Error) -> Self {
        IndexError::Io { path: path.to_path_buf(), error }
    }
    /// Opening an index file to load it: a missing one says how to build it.
    pub(crate) fn index_io(path: &Path, error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::NotFound {
            IndexError::Missing { path: path.to_path_buf() }
        } else {
            IndexError::io(path, error)
        }
    }
    pub(crate) fn truncated(path: &Path, detail: impl Into<String>) -> Self {
        IndexError::Truncated { path: path.to_path_buf(), detail: detail.into() }
    }
    pub(crate) fn corrupt(path: &Path, detail: impl Into<String>) -> Self {
        IndexError::Corrupt { path: path.to_path_buf(), detail: detail.into() }
    }
    pub(crate) fn mismatch(path: &Path, detail: impl Into<String>) -> Self {
        IndexError::Mismatch { path: path.to_path_buf(), detail: detail.into() }
    }
    pub(crate) fn bad_fasta(path: &Path, detail: impl Into<String>) -> Self {
        IndexError::BadFasta { path: path.to_path_buf(), detail: detail.into() }
    }
}

pub type Result<T> = std::result::Result<T, IndexError>;

/// Appends `ext` to a prefix path: `ref.fa` + `.bwt` = `ref.fa.bwt` (not a replaced extension).
pub fn with_ext(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}
