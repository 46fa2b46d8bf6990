//! `bcuda aln` on every form of input gives bwa's .sai byte for byte: gzip (one member or
//! several), BGZF, zstd and
//! FASTA reads of several parser chunks (more than 1 MiB), and several read files in one run,
//! whose .sai is bwa's of their concatenation (samse then takes the concatenated reads).

mod common;

use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// lambda indexed by bwa, and 14,000 simulated 100 bp reads (about 3 MiB of FASTQ).
struct Inputs {
    dir: tempfile::TempDir,
    prefix: PathBuf,
    reads: PathBuf,
}

fn inputs() -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&data("lambda.fa"), dir.path());
    let reads = dir.path().join("reads.fq");
    simulate_reads(&data("lambda.fa"), 100, 14_000, 7, &reads);
    assert!(std::fs::metadata(&reads).unwrap().len() > 2 << 20);
    Inputs { dir, prefix, reads }
}

fn write(path: &Path, bytes: &[u8]) -> String {
    std::fs::write(path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bgzf(bytes: &[u8]) -> Vec<u8> {
    let mut w = noodles::bgzf::io::Writer::new(Vec::new());
    w.write_all(bytes).unwrap();
    w.finish().unwrap()
}

fn aln(prefix: &Path, reads: &[&str]) -> Vec<u8> {
    let mut args = vec!["aln", "--quiet", "--cpu", prefix.to_str().unwrap()];
    args.extend(reads);
    bcuda(&args)
}

#[test]
fn compressed_and_fasta_reads_as_bwa() {
    let Inputs { dir, prefix, reads } = inputs();
    let p = prefix.to_str().unwrap();
    let theirs = bwa(&["aln", p, reads.to_str().unwrap()]);
    assert!(theirs.len() > 14_000 * 4);
    let fastq = std::fs::read(&reads).unwrap();
    let cases = [
        ("plain", fastq.clone()),
        ("gzip", gzip(&fastq)),
        // Three members, as `cat a.gz b.gz c.gz` makes; the cuts fall inside records.
        (
            "gzip-members",
            [gzip(&fastq[..1_000_003]), gzip(&fastq[1_000_003..2_500_000]), gzip(&fastq[2_500_000..])].concat(),
        ),
        ("bgzf", bgzf(&fastq)),
        ("zstd", zstd::encode_all(&fastq[..], 3).unwrap()),
        ("crlf", String::from_utf8(fastq.clone()).unwrap().replace('\n', "\r\n").into_bytes()),
    ];
    for (name, bytes) in cases {
        let path = write(&dir.path().join(format!("reads.{name}")), &bytes);
        assert!(aln(&prefix, &[&path]) == theirs, "{name}: the .sai differs from bwa's");
    }
    // FASTA reads, their sequences over several lines.
    let text = String::from_utf8(fastq).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let fasta: String =
        lines.chunks(4).map(|r| format!(">{}\n{}\n{}\n", &r[0][1..], &r[1][..60], &r[1][60..])).collect();
    let fa = write(&dir.path().join("reads.fa"), fasta.as_bytes());
    assert!(aln(&prefix, &[&fa]) == bwa(&["aln", p, &fa]), "FASTA: the .sai differs from bwa's");
}

#[test]
fn several_read_files_give_the_sai_of_their_concatenation() {
    let Inputs { dir, prefix, reads } = inputs();
    let text = std::fs::read_to_string(&reads).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Three parts of unequal sizes: plain, gzip, BGZF.
    let parts: Vec<String> = [&lines[..4 * 3000], &lines[4 * 3000..4 * 9001], &lines[4 * 9001..]]
        .iter()
        .map(|part| part.iter().map(|l| format!("{l}\n")).collect())
        .collect();
    let files = [
        write(&dir.path().join("a.fq"), parts[0].as_bytes()),
        write(&dir.path().join("b.fq.gz"), &gzip(parts[1].as_bytes())),
        write(&dir.path().join("c.fq.gz"), &bgzf(parts[2].as_bytes())),
    ];
    let p = prefix.to_str().unwrap();
    let concatenated = write(&dir.path().join("all.fq"), parts.concat().as_bytes());
    let theirs = bwa(&["aln", p, &concatenated]);
    let ours = aln(&prefix, &files.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ours == theirs, "the .sai of three files differs from bwa's of their concatenation");
    // samse takes the concatenated reads, as the documentation says.
    let sai = write(&dir.path().join("ours.sai"), &ours);
    let no_pg = |sam: Vec<u8>| {
        String::from_utf8(sam).unwrap().lines().filter(|l| !l.starts_with("@PG")).collect::<Vec<_>>().join("\n")
    };
    let sam = no_pg(bcuda(&["samse", "--quiet", p, &sai, &concatenated]));
    let bwa_sai = write(&dir.path().join("bwa.sai"), &theirs);
    assert_eq!(sam, no_pg(bwa(&["samse", p, &bwa_sai, &concatenated])));
}

#[test]
fn a_bad_record_in_a_later_file_is_named_in_that_file() {
    let Inputs { dir, prefix, reads } = inputs();
    let bad = write(
        &dir.path().join("bad.fq"),
        b"@ok\nACGTACGTACGTACGTACGTACGTACGTACGTACG\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n@bad\nACGT\n+\nII\n",
    );
    let out = dir.path().join("out.sai");
    let err = bcuda_fails(&[
        "aln",
        "--quiet",
        "--cpu",
        "-f",
        out.to_str().unwrap(),
        prefix.to_str().unwrap(),
        reads.to_str().unwrap(),
        &bad,
    ]);
    assert!(err.contains(&format!("{bad}: record 2")), "{err}");
    assert!(!out.exists(), "a .sai was left behind");
    // Several files need the index named: reads alone are not taken for an index.
    let err = bcuda_fails(&["aln", "--quiet", reads.to_str().unwrap(), &bad]);
    assert!(err.contains("is not an index"), "{err}");
}
