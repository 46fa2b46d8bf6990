//! Shared helpers of the index tests: paths to the repo's data and a `bwa` that must exist.
#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A file of data/ (from scripts/get-data.sh); panics with instructions when it is missing.
pub fn data(name: &str) -> PathBuf {
    let p = repo().join("data").join(name);
    assert!(p.exists(), "{} is missing: run scripts/get-data.sh first", p.display());
    p
}

pub fn testdata(name: &str) -> PathBuf {
    repo().join("testdata").join(name)
}

/// Runs `bwa` with `args`; panics if bwa is not installed (CI installs it) or fails.
pub fn bwa(args: &[&str]) -> Vec<u8> {
    let out =
        Command::new("bwa").args(args).output().unwrap_or_else(|e| panic!("cannot run bwa ({e}): apt-get install bwa"));
    assert!(out.status.success(), "bwa {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Copies `src` into `dir` and returns the copy's path (index files are written beside it).
pub fn copy_into(src: &Path, dir: &Path) -> PathBuf {
    let dst = dir.join(src.file_name().unwrap());
    std::fs::copy(src, &dst).unwrap();
    dst
}

pub const INDEX_EXTS: [&str; 5] = [".pac", ".ann", ".amb", ".bwt", ".sa"];

pub fn with_ext(p: &Path, ext: &str) -> PathBuf {
    bcuda_index::with_ext(p, ext)
}

/// Creates `dir` (and parents) and returns it.
pub fn mkdir(dir: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
