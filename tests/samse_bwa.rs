//! `bcuda samse` writes the same SAM records as `bwa samse` 0.7.17 (all but the @PG line),
//! and its BAM holds the same records.

mod common;

use common::*;
use std::path::Path;

fn without_pg(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect()
}

/// bwa aln (with `aln_opts`) once, then bwa samse and bcuda samse (with `samse_opts`) on it.
fn assert_same_sam(prefix: &Path, reads: &Path, aln_opts: &[&str], samse_opts: &[&str]) -> Vec<String> {
    let (p, r) = (prefix.to_str().unwrap(), reads.to_str().unwrap());
    let sai = prefix.with_extension(format!("{}.sai", aln_opts.join("")));
    std::fs::write(&sai, bwa(&command_line("aln", aln_opts, &[p, r]))).unwrap();
    let args = command_line("samse", samse_opts, &[p, sai.to_str().unwrap(), r]);
    let theirs = without_pg(&bwa(&args));
    let ours = without_pg(&bcuda(&quiet(args)));
    assert_eq!(ours.len(), theirs.len(), "{} {aln_opts:?} {samse_opts:?}: record counts differ", reads.display());
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b, "{} {aln_opts:?} {samse_opts:?}", reads.display());
    }
    ours
}

#[test]
fn lambda_art_reads() {
    let Fixture { dir: _dir, prefix, reads } = fixture("lambda.fa", "lambda_art.fq", 5000);
    let sam = assert_same_sam(&prefix, &reads, &[], &[]);
    assert!(sam.iter().any(|l| l.contains("XT:A:U")));
    assert_same_sam(&prefix, &reads, &["-n", "2"], &[]);
    assert_same_sam(&prefix, &reads, &["-o", "0"], &[]);
    let trimmed = assert_same_sam(&prefix, &reads, &["-q", "15"], &["-r", "@RG\\tID:grp1\\tSM:lambda"]);
    assert!(trimmed.iter().any(|l| l.contains("XC:i:")) && trimmed.iter().any(|l| l.starts_with("@RG")));
}

#[test]
fn gapped_multi_hit_and_unmapped_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let sam = assert_same_sam(&prefix, &testdata("demo.fq"), &["-o", "2"], &["-n", "5"]);
    let fields = |l: &String| l.split('\t').map(str::to_string).collect::<Vec<_>>();
    assert!(sam.iter().any(|l| l.contains("XA:Z:")), "no XA hits");
    assert!(
        sam.iter().filter(|l| !l.starts_with('@')).any(|l| fields(l)[5].contains('D') || fields(l)[5].contains('I')),
        "no gapped CIGAR"
    );
    assert!(sam.iter().any(|l| !l.starts_with('@') && fields(l)[1] == "4"), "no unmapped read");
    assert!(sam.iter().any(|l| l.contains("XN:i:") || l.contains("MD:Z:")));
    for len in [36, 150, 250] {
        let reads = tmp.path().join(format!("sim{len}.fq"));
        simulate_reads(&testdata("demo_ref.fa"), len, 1500, len as u64, &reads);
        assert_same_sam(&prefix, &reads, &[], &["-n", "3"]);
    }
}

#[test]
fn ecoli_art_reads() {
    let Fixture { dir: _dir, prefix, reads } = fixture("ecoli536.fa", "ecoli536_art.fq", 30000);
    assert_same_sam(&prefix, &reads, &[], &[]);
}

#[test]
fn bam_holds_the_same_records() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, r) = (prefix.to_str().unwrap(), testdata("demo.fq"));
    let sai = tmp.path().join("d.sai");
    std::fs::write(&sai, bcuda(&["aln", "--quiet", p, r.to_str().unwrap()])).unwrap();
    let sam = without_pg(&bcuda(&["samse", "--quiet", p, sai.to_str().unwrap(), r.to_str().unwrap()]));
    let bam = tmp.path().join("d.bam");
    bcuda(&["samse", "--quiet", "-o", bam.to_str().unwrap(), p, sai.to_str().unwrap(), r.to_str().unwrap()]);
    let from_bam = without_pg(&run("samtools", &["view", "-h", bam.to_str().unwrap()]));
    assert_eq!(from_bam, sam);
    let sam_file = tmp.path().join("d.sam");
    bcuda(&["samse", "--quiet", "-o", sam_file.to_str().unwrap(), p, sai.to_str().unwrap(), r.to_str().unwrap()]);
    assert_eq!(without_pg(&std::fs::read(&sam_file).unwrap()), sam);
}

#[test]
fn sai_of_another_index_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let small = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let Fixture { dir: _dir, prefix: lambda, reads } = fixture("lambda.fa", "lambda_art.fq", 200);
    let sai = tmp.path().join("lambda.sai");
    std::fs::write(&sai, bwa(&["aln", lambda.to_str().unwrap(), reads.to_str().unwrap()])).unwrap();
    let out = tmp.path().join("out.sam");
    let err = bcuda_fails(&[
        "samse",
        "-o",
        out.to_str().unwrap(),
        small.to_str().unwrap(),
        sai.to_str().unwrap(),
        reads.to_str().unwrap(),
    ]);
    assert!(err.contains("lambda.sai") && err.contains("another index"), "{err}");
    assert!(!out.exists());
}

#[test]
fn sai_of_other_reads_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let (p, r) = (prefix.to_str().unwrap(), testdata("demo.fq"));
    let few = tmp.path().join("few.fq");
    head_fastq(&r, 10, &few);
    let sai = tmp.path().join("few.sai");
    std::fs::write(&sai, bcuda(&["aln", "--quiet", p, few.to_str().unwrap()])).unwrap();
    let out = tmp.path().join("out.sam");
    let err = bcuda_fails(&["samse", "-f", out.to_str().unwrap(), p, sai.to_str().unwrap(), r.to_str().unwrap()]);
    assert!(err.contains("few.sai") && err.contains("read 11"), "{err}");
    assert!(!out.exists());
    let err = bcuda_fails(&[
        "samse",
        p,
        sai.to_str().unwrap(),
        few.to_str().unwrap().replace("few.fq", "missing.fq").as_str(),
    ]);
    assert!(err.contains("missing.fq"), "{err}");
    let bigger = tmp.path().join("big.sai");
    std::fs::write(&bigger, bcuda(&["aln", "--quiet", p, r.to_str().unwrap()])).unwrap();
    let err = bcuda_fails(&["samse", p, bigger.to_str().unwrap(), few.to_str().unwrap()]);
    assert!(err.contains("more records"), "{err}");
}
