//! `bcuda-dev kernel-resources` reports the team kernels' registers as NVRTC compiles them, and
//! a switch that caps them shows in the report; the no-hit pass's kernels when it is on
//! (skipped without NVRTC).

use std::process::Command;

/// The registers of inexact_level in each compilation of the report, in order.
fn level_registers(report: &str) -> Vec<u32> {
    report
        .lines()
        .filter_map(|l| l.trim().strip_prefix("inexact_level: Used "))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

fn kernel_resources(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bcuda-dev")).arg("kernel-resources").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_team_kernels_registers_follow_their_launch_bounds() {
    if !bcuda::gpu::nvrtc_present() {
        eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
        return;
    }
    let default_report = kernel_resources(&[]);
    let defaults = level_registers(&default_report);
    assert_eq!(defaults.len(), 2, "pass 2's and pass 3's compilations");
    // Pass 3's teams of 1024 threads leave 64 registers a thread; pass 2's one-warp teams more.
    assert!(defaults[1] <= 64 && defaults[0] > 64, "{defaults:?}");
    // 32 resident one-warp teams per SM leave 64 registers a thread.
    let capped = level_registers(&kernel_resources(&["--switch", "level_min_blocks=32"]));
    assert!(capped[0] <= 64, "{capped:?}");
    let no_hit = kernel_resources(&["--switch", "no_hit_budget=100000"]);
    assert!(!default_report.contains("no_hit_proof"), "the pass is off by default");
    assert!(
        no_hit.lines().any(|l| l.trim().starts_with("no_hit_proof: Used")) && no_hit.contains("no_hit_join: Used"),
        "{no_hit}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_bcuda-dev"))
        .args(["kernel-resources", "--switch", "nope=1"])
        .output()
        .unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("nope"));
}
