//! The one-line summary every command ends with on stderr when stderr is a file (as in a
//! workflow's log): version, index, count, seconds and rate; none with `--quiet`.

mod common;

use std::process::Stdio;

use common::*;

/// Runs bcuda with stderr into a file; returns that file's text.
fn stderr_into_file(args: &[&str], dir: &std::path::Path) -> String {
    let log = dir.join("stderr.log");
    let status = common::bcuda_command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "bcuda {args:?} failed: {text}");
    text
}

/// The summary line of `command` in `log`, checked for its parts.
fn check_summary(log: &str, command: &str, index: &std::path::Path, count: u64, unit: &str) {
    let start =
        format!("[bcuda {command}] bcuda {}, index {}: {count} {unit} in ", env!("CARGO_PKG_VERSION"), index.display());
    let line = log
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no summary line '{start}...' in:\n{log}"));
    let rest = &line[start.len()..];
    let (secs, rate) = rest.split_once(" s (").unwrap_or_else(|| panic!("{line}"));
    secs.parse::<f64>().unwrap_or_else(|_| panic!("seconds in {line}"));
    assert!(rate.ends_with(&format!(" {unit}/s)")), "{line}");
}

#[test]
fn every_command_ends_with_a_summary_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fasta = d.join("lambda.fa");
    std::fs::copy(data("lambda.fa"), &fasta).unwrap();
    let prefix = fasta.to_str().unwrap();
    let reads = [d.join("r1.fq"), d.join("r2.fq")];
    head_fastq(&data("lambda_pe250_1.fq"), 500, &reads[0]);
    head_fastq(&data("lambda_pe250_1.fq").with_file_name("lambda_pe250_2.fq"), 500, &reads[1]);
    let (r1, r2) = (reads[0].to_str().unwrap(), reads[1].to_str().unwrap());
    let sai = [d.join("1.sai"), d.join("2.sai")];
    let (s1, s2) = (sai[0].to_str().unwrap(), sai[1].to_str().unwrap());

    check_summary(&stderr_into_file(&["index", "--not-default", prefix], d), "index", &fasta, 48502, "bases");
    check_summary(&stderr_into_file(&["aln", "-f", s1, prefix, r1], d), "aln", &fasta, 500, "reads");
    stderr_into_file(&["aln", "-f", s2, prefix, r2], d);
    check_summary(&stderr_into_file(&["samse", "-f", "/dev/null", prefix, s1, r1], d), "samse", &fasta, 500, "reads");
    check_summary(
        &stderr_into_file(&["sampe", "-f", "/dev/null", prefix, s1, s2, r1, r2], d),
        "sampe",
        &fasta,
        500,
        "pairs",
    );

    for args in [
        vec!["aln", "--quiet", "-f", s1, prefix, r1],
        vec!["samse", "--quiet", "-f", "/dev/null", prefix, s1, r1],
        vec!["sampe", "--quiet", "-f", "/dev/null", prefix, s1, s2, r1, r2],
    ] {
        let log = stderr_into_file(&args, d);
        assert!(!log.contains("reads/s") && !log.contains("pairs/s"), "{args:?} with --quiet printed:\n{log}");
    }
}
