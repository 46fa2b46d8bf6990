//! What the tests of CUDA kernels built for the CPU share.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `host` (a C++ program under dev/tests that includes kernels of cuda/) built into `dir` as
/// `name` with the `-D` options `defines`; None without a C++ compiler (`CXX`, else `c++`).
pub fn build_cpu_kernels(dir: &Path, host: &str, name: &str, defines: &[String]) -> Option<PathBuf> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join(name);
    let out = Command::new(&cxx)
        .args(["-O1", "-std=c++17", "-w", "-I"])
        .arg(here.join("../cuda"))
        .args(defines)
        .arg(here.join("tests").join(host))
        .arg("-o")
        .arg(&exe)
        .output()
        .ok()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(exe)
}
