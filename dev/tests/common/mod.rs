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

/// The stdout of `host` (built by [`build_cpu_kernels`]) given `input` on its stdin; panics
/// where it fails.
#[allow(dead_code)] // not every test that includes this module runs a host this way
pub fn run_host(host: &Path, input: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(host).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{} failed", host.display());
    String::from_utf8(out.stdout).unwrap()
}
