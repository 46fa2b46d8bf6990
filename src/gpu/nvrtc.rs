//! Loading CUDA and compiling the kernels of `cuda/` at run time with NVRTC (through cudarc,
//! loaded dynamically, so the same binary runs on machines without CUDA), with the PTX cached
//! per source, defines and architecture.

use anyhow::{anyhow, Result};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

use super::BWT_CUH;

/// Whether the CUDA driver library can be loaded (cudarc panics when it cannot).
pub fn driver_present() -> bool {
    cudarc::get_lib_name_candidates("cuda").iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// Whether NVRTC can be loaded.
pub fn nvrtc_present() -> bool {
    cudarc::get_lib_name_candidates("nvrtc").iter().any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// Compiles a kernel file (with the shared header) to PTX.
pub fn compile(source: &str, defines: &[String], arch: Option<&'static str>) -> Result<String> {
    nvrtc(format!("{BWT_CUH}\n{source}"), defines, arch)
}

/// Compiles a self-contained kernel file (no shared header) to PTX.
pub fn compile_alone(source: &str, defines: &[String], arch: Option<&'static str>) -> Result<String> {
    nvrtc(source.to_string(), defines, arch)
}

fn nvrtc(full_source: String, defines: &[String], arch: Option<&'static str>) -> Result<String> {
    let opts = CompileOptions { options: defines.to_vec(), arch, ..Default::default() };
    let ptx = compile_ptx_with_opts(full_source, opts).map_err(|e| anyhow!("NVRTC: {e:?}"))?;
    Ok(ptx.to_src())
}

/// [`compile_alone`] through the PTX cache of [`compile_cached`].
pub fn compile_alone_cached(source: &str, defines: &[String], arch: &'static str) -> Result<String> {
    through_cache(&cache_path_with("", source, defines, arch), || compile_alone(source, defines, Some(arch)))
}

/// `compile`, with the PTX kept under the user's cache directory keyed by a hash of the
/// source, defines and architecture, so later runs skip NVRTC.
pub fn compile_cached(source: &str, defines: &[String], arch: &'static str) -> Result<String> {
    through_cache(&cache_path(source, defines, arch), || compile(source, defines, Some(arch)))
}

/// The PTX at `path` in the cache, or `compile`'s, then kept there; a cache that cannot be
/// written only costs a compile next time.
fn through_cache(path: &std::path::Path, compile: impl FnOnce() -> Result<String>) -> Result<String> {
    if let Ok(ptx) = std::fs::read_to_string(path) {
        return Ok(ptx);
    }
    let ptx = compile()?;
    let dir = path.parent().expect("the cache path has a folder");
    if std::fs::create_dir_all(dir).is_ok() {
        let tmp = crate::output::temp_path_for(path);
        if std::fs::write(&tmp, &ptx).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
    Ok(ptx)
}

/// The PTX cache file of a kernel source, its defines and architecture.
fn cache_path(source: &str, defines: &[String], arch: &'static str) -> std::path::PathBuf {
    cache_path_with(BWT_CUH, source, defines, arch)
}

/// The cache file of `source` compiled after `header` (empty: alone).
fn cache_path_with(header: &str, source: &str, defines: &[String], arch: &'static str) -> std::path::PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (header, source, defines, arch, env!("CARGO_PKG_VERSION")).hash(&mut h);
    cache_dir().join("ptx").join(format!("{:016x}.ptx", h.finish()))
}

/// Whether [`compile_cached`] would find this kernel's PTX in the cache.
pub fn is_cached(source: &str, defines: &[String], arch: &'static str) -> bool {
    cache_path(source, defines, arch).exists()
}

/// `$XDG_CACHE_HOME/bcuda` or `~/.cache/bcuda`.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("bcuda")
}

pub fn arch_for(cc: (i32, i32)) -> &'static str {
    match cc {
        (9, _) => "sm_90",
        (8, 9) => "sm_89",
        (8, 6) => "sm_86",
        (8, 0) => "sm_80",
        (7, 5) => "sm_75",
        (10, _) => "sm_100",
        (12, _) => "sm_120",
        _ => "sm_75",
    }
}

