//! Loading CUDA and compiling the kernels of `cuda/` at run time with NVRTC (through cudarc,
//! loaded dynamically, so the same binary runs on machines without CUDA), with the compiled
//! modules cached per source, defines and architecture.

use std::ffi::{c_char, CStr, CString};
use std::sync::Arc;

use anyhow::{anyhow, Result};
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

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

/// A compiled kernel file as the driver loads it: for a real architecture (`sm_90`) the GPU's
/// own code (CUBIN), so that loading it compiles nothing (the driver's compile of PTX at each
/// load took most of an autotune evaluation: 3.4 s per variant on E. coli, of which the GPU
/// ran 0.35 s); for a virtual one (`compute_75`) PTX, which the driver compiles.
pub struct Image(Vec<u8>);

impl Image {
    pub fn load(self, ctx: &Arc<CudaContext>) -> Result<Arc<CudaModule>> {
        Ok(ctx.load_module(Ptx::from_binary(self.0))?)
    }
}

/// [`compile_alone`] through the cache of [`compile_cached`].
pub fn compile_alone_cached(source: &str, defines: &[String], arch: &'static str) -> Result<Image> {
    through_cache(&cache_path_with("", source, defines, arch), || image(source.to_string(), defines, arch))
}

/// `compile` to an [`Image`], kept under the user's cache directory keyed by a hash of the
/// source, defines and architecture, so later runs skip NVRTC.
pub fn compile_cached(source: &str, defines: &[String], arch: &'static str) -> Result<Image> {
    let defines = &with_line_info(defines);
    through_cache(&cache_path(source, defines, arch), || image(format!("{BWT_CUH}\n{source}"), defines, arch))
}

/// The kernels compiled with source lines (`-lineinfo`) under
/// [`crate::test_hooks::line_info`]; a cache entry of its own.
fn with_line_info(defines: &[String]) -> Vec<String> {
    let mut d = defines.to_vec();
    if crate::test_hooks::line_info() {
        d.push("-lineinfo".to_string());
    }
    d
}

/// The image at `path` in the cache, or `compile`'s, then kept there; a cache that cannot be
/// written only costs a compile next time.
fn through_cache(path: &std::path::Path, compile: impl FnOnce() -> Result<Image>) -> Result<Image> {
    if let Ok(bytes) = std::fs::read(path) {
        return Ok(Image(bytes));
    }
    let image = compile()?;
    let dir = path.parent().expect("the cache path has a folder");
    if std::fs::create_dir_all(dir).is_ok() {
        if let Ok(mut out) = bcuda_output::Output::file(path) {
            if std::io::Write::write_all(&mut out, &image.0).is_ok() {
                let _ = out.commit();
            }
        }
    }
    Ok(image)
}

/// NVRTC's CUBIN for a real architecture, its PTX (with the NUL the driver reads up to) for a
/// virtual one.
fn image(full_source: String, defines: &[String], arch: &'static str) -> Result<Image> {
    if !arch.starts_with("sm_") {
        let mut ptx = nvrtc(full_source, defines, Some(arch))?.into_bytes();
        ptx.push(0);
        return Ok(Image(ptx));
    }
    let options: Vec<String> =
        std::iter::once(format!("--gpu-architecture={arch}")).chain(defines.iter().cloned()).collect();
    let (cubin, _log) = compile_program(full_source, &options, |prog| {
        use cudarc::nvrtc::sys;
        let mut size = 0usize;
        // SAFETY: `prog` compiled; the buffer is sized by NVRTC's own size call.
        unsafe {
            sys::nvrtcGetCUBINSize(prog, &mut size).result().and_then(|()| {
                let mut cubin = vec![0u8; size];
                sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut c_char).result().map(|()| cubin)
            })
        }
        .map_err(|e| anyhow!("NVRTC (CUBIN): {e:?}"))
    })?;
    Ok(Image(cubin))
}

/// ptxas's report of a kernel file's resources for a real architecture (`sm_90`): per entry
/// function its registers, stack and spills, which decide how many blocks fit an SM.
pub fn resource_usage(source: &str, defines: &[String], arch: &'static str) -> Result<String> {
    let options: Vec<String> = [format!("--gpu-architecture={arch}"), "-Xptxas=-v".to_string()]
        .into_iter()
        .chain(defines.iter().cloned())
        .collect();
    let ((), log) = compile_program(format!("{BWT_CUH}\n{source}"), &options, |_| Ok(()))?;
    Ok(log)
}

/// Compiles `full_source` with NVRTC's program API and `options`, then takes what it needs from
/// the compiled program (`take`); returns that and NVRTC's log. The log is the error's on failure.
fn compile_program<T>(
    full_source: String,
    options: &[String],
    take: impl FnOnce(cudarc::nvrtc::sys::nvrtcProgram) -> Result<T>,
) -> Result<(T, String)> {
    use cudarc::nvrtc::result;
    let src = CString::new(full_source).map_err(|_| anyhow!("NVRTC: a NUL in the kernel source"))?;
    let prog = result::create_program(&src, None).map_err(|e| anyhow!("NVRTC: {e:?}"))?;
    // SAFETY: `prog` lives until destroy_program below, `src` beyond it; the log's buffer is
    // sized by NVRTC's own size call.
    unsafe {
        let compiled = result::compile_program(prog, options);
        let log = result::get_program_log(prog)
            .map(|l| CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned())
            .unwrap_or_default();
        let taken = match compiled {
            Err(e) => Err(anyhow!("NVRTC: {e:?}\n{log}")),
            Ok(()) => take(prog),
        };
        let _ = result::destroy_program(prog);
        Ok((taken?, log))
    }
}

/// The cache file of a kernel source, its defines and architecture.
fn cache_path(source: &str, defines: &[String], arch: &'static str) -> std::path::PathBuf {
    cache_path_with(BWT_CUH, source, defines, arch)
}

/// The cache file of `source` compiled after `header` (empty: alone).
fn cache_path_with(header: &str, source: &str, defines: &[String], arch: &'static str) -> std::path::PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (header, source, defines, arch, env!("CARGO_PKG_VERSION")).hash(&mut h);
    cache_dir().join("modules").join(format!("{:016x}", h.finish()))
}

/// Whether [`compile_cached`] would find this kernel in the cache.
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

/// The architecture to compile for: one whose CUBIN this GPU runs (the same major version, a
/// minor one no higher), else PTX for the driver to compile.
pub fn arch_for(cc: (i32, i32)) -> &'static str {
    match cc {
        (12, _) => "sm_120",
        (10, _) => "sm_100",
        (9, _) => "sm_90",
        (8, 9) => "sm_89",
        (8, 6) => "sm_86",
        (8, _) => "sm_80",
        (7, 5) => "sm_75",
        _ => "compute_75",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real architecture gives the GPU's own code (an ELF CUBIN: nothing left for the driver
    /// to compile), a virtual one PTX ending in the NUL the driver reads up to; a compile error
    /// says NVRTC (autotune counts such a variant as a compile error) with the log.
    #[test]
    fn images_are_cubin_for_real_architectures_and_ptx_for_virtual_ones() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        let src = "extern \"C\" __global__ void twice(int *x) { x[threadIdx.x] *= 2; }";
        let cubin = image(src.to_string(), &[], "sm_90").unwrap();
        assert_eq!(&cubin.0[..4], b"\x7fELF");
        let ptx = image(src.to_string(), &["-DUNUSED=1".to_string()], "compute_75").unwrap();
        assert!(String::from_utf8_lossy(&ptx.0).contains(".entry twice"));
        assert_eq!(ptx.0.last(), Some(&0));
        let err = format!("{:#}", image("__global__ void broken( {".to_string(), &[], "sm_90").err().unwrap());
        assert!(err.contains("NVRTC") && err.contains("error"), "{err}");
    }

    /// Every GPU gets an architecture whose CUBIN it runs, or PTX.
    #[test]
    fn architectures_follow_the_compute_capability() {
        assert_eq!(arch_for((9, 0)), "sm_90");
        assert_eq!(arch_for((8, 7)), "sm_80");
        assert_eq!(arch_for((12, 1)), "sm_120");
        assert_eq!(arch_for((7, 0)), "compute_75");
    }
}
