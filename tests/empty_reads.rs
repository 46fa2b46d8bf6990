//! Reads with an empty sequence are skipped, as bwa 0.7.17's bwa_read_seq skips them: no
//! `.sai` record, no SAM line; `.sai` and SAM byte for byte bwa's (but @PG), FASTQ and FASTA,
//! single and paired. A pair with one empty mate, where bwa sampe pairs the wrong reads and
//! stops, is an error naming the empty record.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn without_pg(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect()
}

/// The first `n` reads of `src` (4-line FASTQ) with the sequence and quality of the reads at
/// `empty` (0-based) emptied; as FASTA (names and sequences) when `fasta`.
fn with_empty_reads(src: &Path, n: usize, empty: &[usize], fasta: bool, dst: &Path) {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<&str> = text.lines().take(4 * n).collect();
    let mut out = String::new();
    for (i, rec) in lines.chunks(4).enumerate() {
        let (seq, qual) = if empty.contains(&i) { ("", "") } else { (rec[1], rec[3]) };
        if fasta {
            out.push_str(&format!(">{}\n{seq}\n", &rec[0][1..]));
        } else {
            out.push_str(&format!("{}\n{seq}\n+\n{qual}\n", rec[0]));
        }
    }
    std::fs::write(dst, out).unwrap();
}

/// bwa aln and bcuda aln on `reads`: the same `.sai`; returns its path (bwa's).
fn same_sai(prefix: &Path, reads: &Path) -> PathBuf {
    let (p, r) = (prefix.to_str().unwrap(), reads.to_str().unwrap());
    let theirs = bwa(&["aln", p, r]);
    assert_eq!(bcuda(&["aln", "--quiet", p, r]), theirs, "{r}: .sai differs from bwa's");
    let sai = reads.with_extension("sai");
    std::fs::write(&sai, theirs).unwrap();
    sai
}

/// Empty reads first, last, alone and in a run, among reads that map.
const EMPTY: &[usize] = &[0, 7, 40, 41, 42, 150, 199];

#[test]
fn single_end_fastq_and_fasta_as_bwa() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let p = prefix.to_str().unwrap();
    for fasta in [false, true] {
        let reads = tmp.path().join(if fasta { "e.fa" } else { "e.fq" });
        with_empty_reads(&testdata("demo.fq"), 200, EMPTY, fasta, &reads);
        let sai = same_sai(&prefix, &reads);
        let args = ["samse", p, sai.to_str().unwrap(), reads.to_str().unwrap()];
        let theirs = without_pg(&bwa(&args));
        let ours = without_pg(&bcuda(&quiet(args.to_vec())));
        assert_eq!(ours, theirs, "{}", reads.display());
        assert_eq!(ours.iter().filter(|l| !l.starts_with('@')).count(), 200 - EMPTY.len());
        // Every SEQ has bases: the BAM encoder takes the records.
        let bam = tmp.path().join("e.bam");
        bcuda(&["samse", "--quiet", "-o", bam.to_str().unwrap(), p, sai.to_str().unwrap(), reads.to_str().unwrap()]);
        assert_eq!(without_pg(&run("samtools", &["view", "-h", bam.to_str().unwrap()])), ours);
    }
}

#[test]
fn only_empty_reads_give_bwa_header_only_files() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let reads = tmp.path().join("none.fq");
    with_empty_reads(&testdata("demo.fq"), 3, &[0, 1, 2], false, &reads);
    let sai = same_sai(&prefix, &reads);
    let args = ["samse", prefix.to_str().unwrap(), sai.to_str().unwrap(), reads.to_str().unwrap()];
    assert_eq!(without_pg(&bcuda(&quiet(args.to_vec()))), without_pg(&bwa(&args)));
}

#[test]
fn pairs_with_both_mates_empty_as_bwa() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let p = prefix.to_str().unwrap();
    for fasta in [false, true] {
        let ext = if fasta { "fa" } else { "fq" };
        let reads = [1, 2].map(|e| {
            let path = tmp.path().join(format!("e_{e}.{ext}"));
            with_empty_reads(&testdata(&format!("demo_{e}.fq")), 200, EMPTY, fasta, &path);
            path
        });
        let sai = reads.clone().map(|r| same_sai(&prefix, &r));
        let args = [
            "sampe",
            p,
            sai[0].to_str().unwrap(),
            sai[1].to_str().unwrap(),
            reads[0].to_str().unwrap(),
            reads[1].to_str().unwrap(),
        ];
        let theirs = without_pg(&bwa(&args));
        assert_eq!(without_pg(&bcuda(&quiet(args.to_vec()))), theirs, "{ext}");
        assert_eq!(theirs.iter().filter(|l| !l.starts_with('@')).count(), 2 * (200 - EMPTY.len()));
    }
}

#[test]
fn a_pair_with_one_empty_mate_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let reads = [(1, &[][..]), (2, &[41][..])].map(|(e, empty)| {
        let path = tmp.path().join(format!("e_{e}.fq"));
        with_empty_reads(&testdata(&format!("demo_{e}.fq")), 200, empty, false, &path);
        path
    });
    let sai = reads.clone().map(|r| same_sai(&prefix, &r));
    let args = [
        "sampe",
        prefix.to_str().unwrap(),
        sai[0].to_str().unwrap(),
        sai[1].to_str().unwrap(),
        reads[0].to_str().unwrap(),
        reads[1].to_str().unwrap(),
    ];
    // bwa pairs read 42 of the first file with read 43 of the second, then stops at their names.
    let bwa_run = std::process::Command::new("bwa").args(args).output().unwrap();
    assert!(
        !bwa_run.status.success()
            && String::from_utf8_lossy(&bwa_run.stderr).contains("paired reads have different names")
    );
    let err = bcuda_fails(&quiet(args.to_vec()));
    assert!(
        err.contains("have different names")
            && err.contains(
                "e_2.fq: 1 record with an empty sequence skipped as bwa skips them, the first record 42 ('pair_41')"
            ),
        "{err}"
    );
}
