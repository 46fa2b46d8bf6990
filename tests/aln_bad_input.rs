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
    let err = bcuda_fails(&[
        "aln",
        "--quiet",
        "-f",
        out.to_str().unwrap(),
        prefix.to_str().unwrap(),
        reads.to_str().unwrap(),
    ]);
    assert!(err.contains(name), "{name}: error does not name the file: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: error lacks '{e}': {err}");
    }
    assert!(!out.exists(), "{name}: a .sai was left behind");
    let left = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp"))
        .count();
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
    check("cut.fq.gz", &gz[..gz.len() / 2], &["record", "cut short"]);
    // Damaged in the middle: the CRC-32 at the end finds it even where the inflate does not.
    let mut damaged = gz.clone();
    let n = damaged.len();
    damaged[n / 2] ^= 0x10;
    check("damaged.fq.gz", &damaged, &["record", "damaged gzip data"]);
}

#[test]
fn empty_gzip() {
    let enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    check("empty.fq.gz", &enc.finish().unwrap(), &["no reads: the file is empty"]);
}

#[test]
fn empty_input() {
    check("empty.fq", b"", &["empty"]);
}

#[test]
fn read_longer_than_supported() {
    let long = "A".repeat(5000);
    check(
        "long.fq",
        format!("{GOOD}@big\n{long}\n+\n{}\n", "I".repeat(5000)).as_bytes(),
        &["record 2", "'big'", "longer than"],
    );
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

#[test]
fn reads_from_standard_input_plain_and_gzip() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let reads = tmp.path().join("r.fq");
    head_fastq(&testdata("demo.fq"), 500, &reads);
    let p = prefix.to_str().unwrap();
    let from_file = bcuda(&["aln", "--quiet", p, reads.to_str().unwrap()]);
    let text = std::fs::read(&reads).unwrap();
    let (ok, plain, err) = bcuda_with_stdin(&["aln", "--quiet", p, "-"], &text, None);
    assert!(ok, "{err}");
    assert_eq!(plain, from_file);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&text).unwrap();
    let (ok, gz, err) = bcuda_with_stdin(&["aln", "--quiet", p, "-"], &enc.finish().unwrap(), None);
    assert!(ok, "{err}");
    assert_eq!(gz, from_file);
    // samse takes `-` for the reads too.
    let sai = tmp.path().join("r.sai");
    std::fs::write(&sai, &from_file).unwrap();
    let sam_file = bcuda(&["samse", "--quiet", p, sai.to_str().unwrap(), reads.to_str().unwrap()]);
    let (ok, sam_stdin, err) = bcuda_with_stdin(&["samse", "--quiet", p, sai.to_str().unwrap(), "-"], &text, None);
    assert!(ok, "{err}");
    let records = |s: &[u8]| {
        String::from_utf8_lossy(s).lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(records(&sam_stdin), records(&sam_file));
}

#[test]
fn first_batch_failing_writes_nothing_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let p = prefix.to_str().unwrap();
    let bad = format!("{GOOD}@r2\nACGT\nIIII\n");
    let (ok, out, err) = bcuda_with_stdin(&["aln", "--quiet", p, "-"], bad.as_bytes(), None);
    assert!(!ok && err.contains("standard input: record 2"), "{err}");
    assert!(out.is_empty(), "wrote {} bytes (the .sai header?) before failing", out.len());
    // samse too: no SAM header before the error.
    let sai = tmp.path().join("r.sai");
    std::fs::write(&sai, bcuda(&["aln", "--quiet", p, &testdata("demo.fq").to_string_lossy()])).unwrap();
    let (ok, out, err) = bcuda_with_stdin(&["samse", "--quiet", p, sai.to_str().unwrap(), "-"], bad.as_bytes(), None);
    assert!(!ok && err.contains("record 2"), "{err}");
    assert!(out.is_empty(), "samse wrote {} bytes before failing", out.len());
}

#[test]
fn a_missing_file_is_reported_once() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, gone) = (prefix.to_str().unwrap(), tmp.path().join("gone"));
    let g = gone.to_str().unwrap();
    let reads = testdata("demo.fq");
    for args in [
        vec!["index", "-q", g],
        vec!["aln", "--quiet", p, g],
        vec!["samse", "--quiet", p, g, reads.to_str().unwrap()],
        vec!["autotune", "--quiet", "--index", g, "--reads", reads.to_str().unwrap()],
    ] {
        let err = bcuda_fails(&args);
        assert!(err.contains(g), "{args:?}: does not name the file: {err}");
        assert_eq!(err.matches("No such file").count() + err.matches("missing").count(), 1, "{args:?}: {err}");
    }
}
