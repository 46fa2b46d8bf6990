//! The tuned-kernel store: the kernels `bcuda autotune` evolved for one GPU model, saved under
//! the kernel cache directory and installed on a GPU by `aln` (unless `--no-tuned`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bcuda_autotune::genome::Genome;
use serde::{Deserialize, Serialize};

use super::{GpuAligner, InexactSwitches, Switches};

/// Both kernels' switches, as the GPU driver takes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSwitches {
    pub exact: Switches,
    pub inexact: InexactSwitches,
}

/// Switches by name: the inexact kernels' names go to them, the others to exact_match's.
pub fn switches_from(assignments: &[(String, u32)]) -> Result<KernelSwitches, String> {
    let mut sw = KernelSwitches {
        exact: Switches { cache_threads: None, ..Switches::default() },
        inexact: InexactSwitches::default(),
    };
    for (name, value) in assignments {
        if InexactSwitches::DOMAINS.iter().any(|d| d.0 == name) {
            sw.inexact.set(&format!("{name}={value}"))?;
        } else {
            sw.exact.set(&format!("{name}={value}"))?;
        }
    }
    match sw.exact.illegal().or(sw.inexact.illegal()) {
        Some(why) => Err(why.to_string()),
        None => Ok(sw),
    }
}

/// A kernel tuned for one GPU, as saved by autotune and loaded by aln.
#[derive(Serialize, Deserialize, Debug)]
pub struct Tuned {
    pub device: String,
    pub compute_capability: (i32, i32),
    pub switches: Vec<(String, u32)>,
    /// exact_match's source.
    pub source: String,
    /// The inexact kernels' source (absent in files of exact_match-only runs).
    #[serde(default)]
    pub inexact_source: Option<String>,
    pub speedup: f64,
    pub genome: Genome,
    /// The unmodified kernels it was evolved from ([`kernels_id`]; empty in older files).
    #[serde(default)]
    pub kernels: String,
}

/// A fingerprint (FNV-1a) of the unmodified CUDA sources: a file tuned from other kernels (an
/// earlier bcuda) may not fit this one's launches, whose arguments change with the kernels.
pub fn kernels_id() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in [super::BWT_CUH, super::EXACT_MATCH_CU, super::INEXACT_MATCH_CU].iter().flat_map(|s| s.bytes().chain([0]))
    {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

fn tuned_path(device: &str, cc: (i32, i32)) -> PathBuf {
    tuned_path_in(&super::cache_dir(), device, cc)
}

/// The tuned file of a GPU model under the kernel cache directory `cache` (see
/// [`super::cache_dir`]).
pub fn tuned_path_in(cache: &Path, device: &str, cc: (i32, i32)) -> PathBuf {
    let name: String = device.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    cache.join("tuned").join(format!("{name}-sm{}{}.json", cc.0, cc.1))
}

impl Tuned {
    /// The unmodified kernels but for the inexact kernels' source, `inexact_source` (a
    /// hand-edited cuda/inexact_match.cu), for GPU model `device` of compute capability `cc`:
    /// `aln` runs it as if autotune had found it, and `aln --no-tuned` the unmodified kernels.
    pub fn variant(device: &str, cc: (i32, i32), inexact_source: String) -> Tuned {
        Tuned {
            device: device.to_string(),
            compute_capability: cc,
            switches: Vec::new(),
            source: super::EXACT_MATCH_CU.to_string(),
            inexact_source: Some(inexact_source),
            speedup: 1.0,
            genome: Genome { switches: Vec::new(), patches: Vec::new(), inexact_patches: Vec::new() },
            kernels: kernels_id(),
        }
    }

    /// Saves the kernels where `aln` looks for them on this GPU (whole or not at all); returns
    /// the file's path.
    pub fn save(&self) -> Result<PathBuf> {
        let path = tuned_path(&self.device, self.compute_capability);
        self.save_at(&path)?;
        Ok(path)
    }

    /// Saves the kernels as `path` (whole or not at all), making its folder if needed.
    pub fn save_at(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut out = bcuda_output::Output::file(path)?;
        out.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
        out.commit()?;
        Ok(())
    }
}

/// The tuned kernels saved for this GPU, if any.
pub fn load_tuned(device: &str, cc: (i32, i32)) -> Option<Tuned> {
    let text = std::fs::read_to_string(tuned_path(device, cc)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Installs the tuned kernels for this GPU on `gpu`, when there are some; returns their speed-up
/// and whether the inexact kernels were tuned too (not only exact_match).
pub fn use_tuned(gpu: &mut GpuAligner) -> Result<Option<(f64, bool)>> {
    let Some(t) = load_tuned(&gpu.device_name, gpu.compute_capability) else { return Ok(None) };
    if t.kernels != kernels_id() {
        anyhow::bail!("it was tuned from the kernels of another bcuda: run bcuda autotune again");
    }
    let sw = switches_from(&t.switches).map_err(|e| anyhow::anyhow!("tuned kernels: {e}"))?;
    let inexact = t.inexact_source.is_some() || sw.inexact != InexactSwitches::default();
    // Both kernels or neither: the inexact ones first, since they are refused before anything
    // changes (switches this GPU cannot take), then put back if exact_match does not compile.
    let before = gpu.inexact_switches.clone();
    if inexact {
        gpu.set_inexact_kernels(t.inexact_source.as_deref().unwrap_or(super::INEXACT_MATCH_CU), sw.inexact)?;
    }
    if let Err(e) = gpu.set_exact_kernel(&t.source, sw.exact) {
        if inexact {
            gpu.set_inexact_kernels(super::INEXACT_MATCH_CU, before)?;
        }
        return Err(e);
    }
    Ok(Some((t.speedup, inexact)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcuda_autotune::genome::barracuda_switches;

    /// A variant's file is one aln takes: this build's kernels fingerprint, the default
    /// switches, exact_match unmodified and the variant as the inexact source, read back whole
    /// from where it was saved.
    #[test]
    fn a_variant_file_is_one_aln_takes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuned").join("v.json");
        Tuned::variant("Test GPU", (9, 0), "// a variant\n".into()).save_at(&path).unwrap();
        let t: Tuned = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(t.kernels, kernels_id());
        assert_eq!((t.device.as_str(), t.compute_capability), ("Test GPU", (9, 0)));
        assert_eq!(switches_from(&t.switches).unwrap(), switches_from(&[]).unwrap());
        assert_eq!(
            (t.source.as_str(), t.inexact_source.as_deref()),
            (super::super::EXACT_MATCH_CU, Some("// a variant\n"))
        );
    }

    /// GPU models are filed under names of letters, digits and underscores.
    #[test]
    fn tuned_files_are_named_by_model_and_compute_capability() {
        let path = tuned_path_in(Path::new("/cache"), "NVIDIA H100 80GB HBM3", (9, 0));
        assert_eq!(path, Path::new("/cache/tuned/NVIDIA_H100_80GB_HBM3-sm90.json"));
    }

    /// A tuned file of this build's kernels with these switches and no inexact source.
    fn sample_tuned(switches: Vec<(String, u32)>) -> Tuned {
        Tuned {
            device: "d".into(),
            compute_capability: (9, 0),
            switches,
            source: "s".into(),
            inexact_source: None,
            speedup: 1.5,
            genome: Genome::reference(&barracuda_switches()),
            kernels: kernels_id(),
        }
    }

    /// A tuned file from an exact_match-only run (no inexact source) still loads.
    #[test]
    fn tuned_files_without_inexact_kernels_load() {
        let t = sample_tuned(vec![("BLOCK_W".into(), 64)]);
        let mut json: serde_json::Value = serde_json::to_value(&t).unwrap();
        json.as_object_mut().unwrap().remove("inexact_source");
        json["genome"].as_object_mut().unwrap().remove("inexact_patches");
        let back: Tuned = serde_json::from_value(json).unwrap();
        assert_eq!(back.inexact_source, None);
        assert!(back.genome.inexact_patches.is_empty());
    }

    /// A file from before the fingerprint, or from other kernels, is refused by use_tuned's
    /// check: its kernels may take other arguments than this bcuda passes.
    #[test]
    fn tuned_files_name_the_kernels_they_came_from() {
        let t = sample_tuned(vec![]);
        let mut json: serde_json::Value = serde_json::to_value(&t).unwrap();
        assert_eq!(serde_json::from_value::<Tuned>(json.clone()).unwrap().kernels, kernels_id());
        json.as_object_mut().unwrap().remove("kernels");
        assert_ne!(serde_json::from_value::<Tuned>(json).unwrap().kernels, kernels_id());
        assert_eq!(kernels_id().len(), 16);
    }
}
