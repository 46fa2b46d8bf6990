//! `bcuda-dev variant-tuned` writes a file `bcuda aln` takes, where aln looks for it.

use std::path::Path;
use std::process::{Command, Output};

use bcuda::gpu::tuned::{kernels_id, switches_from, tuned_path_in, Tuned};

fn variant_tuned(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bcuda-dev"))
        .arg("variant-tuned")
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap()
}

fn read_tuned(path: &Path) -> Tuned {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Without -o the file goes under the kernel cache directory ($XDG_CACHE_HOME/bcuda), at the
/// GPU model's tuned path, and holds the variant as the inexact kernels' source.
#[test]
fn a_variant_is_installed_where_aln_looks() {
    let dir = tempfile::tempdir().unwrap();
    let variant = dir.path().join("v.cu");
    std::fs::write(&variant, "// a variant\n").unwrap();
    let out = variant_tuned(&[variant.to_str().unwrap(), "--device", "Test GPU", "--cc", "9.0"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = tuned_path_in(&dir.path().join("bcuda"), "Test GPU", (9, 0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{}\n", expected.display()));
    let t = read_tuned(&expected);
    assert_eq!(t.kernels, kernels_id());
    assert_eq!((t.device.as_str(), t.compute_capability), ("Test GPU", (9, 0)));
    assert_eq!(switches_from(&t.switches).unwrap(), switches_from(&[]).unwrap());
    assert_eq!((t.source.as_str(), t.inexact_source.as_deref()), (bcuda::gpu::EXACT_MATCH_CU, Some("// a variant\n")));
}

/// -o names the file (its folder made), and nothing goes to the cache directory.
#[test]
fn output_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let variant = dir.path().join("v.cu");
    std::fs::write(&variant, "// b\n").unwrap();
    let file = dir.path().join("out").join("t.json");
    let args = [variant.to_str().unwrap(), "--device", "G", "--cc", "8.6", "-o", file.to_str().unwrap()];
    let out = variant_tuned(&args, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_tuned(&file).compute_capability, (8, 6));
    assert!(!dir.path().join("bcuda").exists());
}

/// A missing variant, a malformed --cc, or --device without --cc: an error naming the problem.
#[test]
fn bad_arguments_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.cu");
    let out = variant_tuned(&[missing.to_str().unwrap(), "--device", "G", "--cc", "9.0"], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.cu"));
    let variant = dir.path().join("v.cu");
    std::fs::write(&variant, "").unwrap();
    let out = variant_tuned(&[variant.to_str().unwrap(), "--device", "G", "--cc", "9"], dir.path());
    assert!(String::from_utf8_lossy(&out.stderr).contains("'9' is not a compute capability"), "{out:?}");
    let out = variant_tuned(&[variant.to_str().unwrap(), "--device", "G"], dir.path());
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--cc"), "{out:?}");
    assert!(!dir.path().join("bcuda").exists());
}
