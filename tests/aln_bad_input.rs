//! `bcuda aln` on bad reads: an error naming the file and the record, and no half-written
//! output with `-f`.

mod common;

use common::*;

fn check(name: &str, content: &[u8], expect: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let reads = tmp.path().join(name);
    std::fs::write(&reads, content).unwrap();
    let out = tmp.path().join("out.sai");
    let err = bcuda_fails(&["aln", "--quiet", "-f", out.to_str().unwrap(), prefix.to_str().unwrap(), reads.to_str().unwrap()]);
    assert!(err.contains(name), "{name}: error does not name the file: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: error lacks '{e}': {err}");
    }
    assert!(!out.exists(), "{name}: a .sai was left behind");
    let left = std::fs::read_dir(tmp.path()).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp")).count();
    assert_eq!(left, 0, "{name}: temporary file left behind");
}

const GOOD: &str = "@r1\nACGTACGTACGTACGTACGTACGTACGTACGTAC\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n";

#[test]
fn missing_plus_line() {
    check("noplus.fq", format!("{GOOD}@r2\nACGT\nIIII\n@r3\nACGT\n+\nIIII\n").as_bytes(), &["record 2"]);
}

#[test]
fn sequence_and_quality_lengths_differ() {
    check("lens.fq", format!("{GOOD}@r2\nACGTACGT\n+\nIIII\n").as_bytes(), &["record 2"]);
}

#[test]
fn truncated_gzip() {
    use std::io::Write;
    let mut gz = Vec::new();
    let mut enc = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::default());
    for _ in 0..3000 {
        enc.write_all(GOOD.as_bytes()).unwrap();
    }
    enc.finish().unwrap();
    check("cut.fq.gz", &gz[..gz.len() / 2], &["record"]);
}

#[test]
fn empty_input() {
    check("empty.fq", b"", &["empty"]);
}

#[test]
fn read_longer_than_supported() {
    let long = "A".repeat(5000);
    check("long.fq", format!("{GOOD}@big\n{long}\n+\n{}\n", "I".repeat(5000)).as_bytes(), &["record 2", "'big'", "longer than"]);
}

#[test]
fn missing_index_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let reads = tmp.path().join("r.fq");
    std::fs::write(&reads, GOOD).unwrap();
    let prefix = tmp.path().join("nothere.fa");
    let err = bcuda_fails(&["aln", prefix.to_str().unwrap(), reads.to_str().unwrap()]);
    assert!(err.contains("nothere.fa.bwt") && err.contains("missing"), "{err}");
}
