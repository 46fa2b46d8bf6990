//! Our index files are byte-identical to `bwa index` 0.7.17's, and bwa aligns the same on them.

mod common;

use bcuda_index::{build_index, BuildOptions, Index};
use common::*;

/// Indexes `fasta` with us and with bwa (with each `-a` algorithm given) in separate folders
/// and compares all five files.
fn assert_same_as_bwa(fasta: &std::path::Path, algos: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let ours = copy_into(fasta, &mkdir(tmp.path().join("ours")));
    build_index(&ours, &ours, BuildOptions::default()).unwrap();
    for algo in algos {
        let theirs = copy_into(fasta, &mkdir(tmp.path().join(format!("bwa-{algo}"))));
        bwa(&["index", "-a", algo, theirs.to_str().unwrap()]);
        for ext in INDEX_EXTS {
            let a = std::fs::read(with_ext(&ours, ext)).unwrap();
            let b = std::fs::read(with_ext(&theirs, ext)).unwrap();
            assert!(a == b, "{}{ext} differs from bwa index -a {algo} ({} vs {} bytes)", fasta.display(), a.len(), b.len());
        }
    }
    // Our loader reads back every hole (whatever byte it is) and sequence of the files.
    let index = Index::load(&ours, true).unwrap_or_else(|e| panic!("{}: {e}", fasta.display()));
    let n_ambs: u64 = index.refs.seqs().iter().map(|s| s.n_ambs as u64).sum();
    assert_eq!(index.refs.holes().len() as u64, n_ambs);
}

#[test]
fn lambda_phage_is_identical() {
    assert_same_as_bwa(&data("lambda.fa"), &["is"]);
}

#[test]
fn ecoli_is_identical_to_both_bwa_algorithms() {
    assert_same_as_bwa(&data("ecoli536.fa"), &["is", "bwtsw"]);
}

#[test]
fn multi_sequence_with_n_runs_iupac_lowercase_is_identical() {
    assert_same_as_bwa(&testdata("multi.fa"), &["is"]);
    assert_same_as_bwa(&testdata("multi_crlf.fa"), &["is"]);
    assert_same_as_bwa(&testdata("multi.fa.gz"), &["is"]);
    assert_same_as_bwa(&testdata("demo_ref.fa"), &["is"]);
    // Spaces, a mid-line '\r' and non-ASCII bytes are holes too, written as raw bytes.
    assert_same_as_bwa(&testdata("odd_bytes.fa"), &["is"]);
}

#[test]
fn bwa_aligns_the_same_on_our_index() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = copy_into(&data("lambda.fa"), &mkdir(tmp.path().join("ours")));
    let theirs = copy_into(&data("lambda.fa"), &mkdir(tmp.path().join("bwa")));
    build_index(&ours, &ours, BuildOptions::default()).unwrap();
    bwa(&["index", theirs.to_str().unwrap()]);
    // The first 2000 reads of the ART set.
    let reads = tmp.path().join("reads.fq");
    let all = std::fs::read_to_string(data("lambda_art.fq")).unwrap();
    std::fs::write(&reads, all.lines().take(8000).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let sam = |prefix: &std::path::Path| {
        let sai = prefix.with_extension("sai");
        std::fs::write(&sai, bwa(&["aln", prefix.to_str().unwrap(), reads.to_str().unwrap()])).unwrap();
        let out = String::from_utf8(bwa(&["samse", prefix.to_str().unwrap(), sai.to_str().unwrap(), reads.to_str().unwrap()])).unwrap();
        out.lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect::<Vec<_>>()
    };
    let (a, b) = (sam(&ours), sam(&theirs));
    assert_eq!(a.len(), b.len());
    assert!(a.len() > 2000);
    assert_eq!(a, b);
}
