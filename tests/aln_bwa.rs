//! `bcuda aln` (CPU) writes the same .sai as `bwa aln` 0.7.17, byte for byte, and `bwa samse`
//! accepts it.

mod common;

use common::*;
use std::path::Path;

/// Runs bwa aln and bcuda aln with `opts` on `reads` and compares the .sai files.
fn assert_same_sai(prefix: &Path, reads: &Path, opts: &[&str]) {
    let (p, r) = (prefix.to_str().unwrap(), reads.to_str().unwrap());
    let args = command_line("aln", opts, &[p, r]);
    let theirs = bwa(&args);
    let ours = bcuda(&quiet(args));
    assert!(theirs.len() > 68, "bwa wrote no reads");
    assert!(
        ours == theirs,
        "{} with {opts:?}: .sai differs from bwa ({} vs {} bytes)",
        reads.display(),
        ours.len(),
        theirs.len()
    );
}

#[test]
fn lambda_art_reads_with_option_sets() {
    let Fixture { dir: _dir, prefix, reads } = fixture("lambda.fa", "lambda_art.fq", 5000);
    for opts in [
        &[][..],
        &["-n", "2"],
        &["-o", "0"],
        &["-l", "25", "-k", "1"],
        &["-R", "5"],
        &["-t", "2"],
        &["-q", "15"],
        &["-e", "3", "-L"],
        &["-n", "0.01", "-M", "4", "-O", "9", "-E", "3"],
        &["-i", "10", "-d", "5"],
    ] {
        assert_same_sai(&prefix, &reads, opts);
    }
}

#[test]
fn ecoli_art_reads() {
    let Fixture { dir: _dir, prefix, reads } = fixture("ecoli536.fa", "ecoli536_art.fq", 30000);
    assert_same_sai(&prefix, &reads, &[]);
    assert_same_sai(&prefix, &reads, &["-t", "2", "-n", "2"]);
}

#[test]
fn simulated_lengths_errors_n_and_unmappable_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&data("lambda.fa"), tmp.path());
    for (len, seed) in [(36, 1), (76, 2), (150, 3), (250, 4)] {
        let reads = tmp.path().join(format!("sim{len}.fq"));
        simulate_reads(&data("lambda.fa"), len, 1500, seed, &reads);
        assert_same_sai(&prefix, &reads, &[]);
        assert_same_sai(&prefix, &reads, &["-N"]);
    }
}

#[test]
fn demo_reference_with_holes_and_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    assert_same_sai(&prefix, &testdata("demo.fq"), &[]);
    assert_same_sai(&prefix, &testdata("demo.fq"), &["-o", "2", "-e", "2"]);
}

#[test]
fn bwa_samse_accepts_our_sai_and_gives_the_same_sam() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (ours, theirs) = (tmp.path().join("ours.sai"), tmp.path().join("bwa.sai"));
    let (p, r) = (prefix.to_str().unwrap(), testdata("demo.fq"));
    let r = r.to_str().unwrap();
    bcuda(&["aln", "--quiet", "-f", ours.to_str().unwrap(), p, r]);
    bwa(&["aln", "-f", theirs.to_str().unwrap(), p, r]);
    let records = |sai: &Path| -> Vec<String> {
        let sam = String::from_utf8(bwa(&["samse", p, sai.to_str().unwrap(), r])).unwrap();
        sam.lines().filter(|l| !l.starts_with('@')).map(str::to_owned).collect()
    };
    let (from_ours, from_bwa) = (records(&ours), records(&theirs));
    assert_eq!(from_ours.len(), 2000, "bwa samse did not give one record per read from our .sai");
    assert!(from_ours == from_bwa, "bwa samse gives different SAM records from our .sai than from bwa's");
}
