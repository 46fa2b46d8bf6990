//! Our index files are byte-identical to `bwa index` 0.7.17's, and bwa aligns the same on them.

mod common;

use bcuda_index::chunk_sort::{ChunkSorter, RadixModel, SortedOn, RADIX_TILE};
use bcuda_index::suffix_sort::SortEvent;
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
            assert!(
                a == b,
                "{}{ext} differs from bwa index -a {algo} ({} vs {} bytes)",
                fasta.display(),
                a.len(),
                b.len()
            );
        }
    }
    // Our loader reads back every hole (whatever byte it is) and sequence of the files.
    let index = Index::load(&ours, true).unwrap_or_else(|e| panic!("{}: {e}", fasta.display()));
    let n_ambs: u64 = index.refs.seqs().iter().map(|s| s.n_ambs as u64).sum();
    assert_eq!(index.refs.holes().len() as u64, n_ambs);
}

/// The build with a chunk sorter (the CPU model of the GPU's pipeline; from chunk
/// `fail_from` on it fails and the CPU sorts the rest) writes bwa's files too.
fn assert_sorter_build_same_as_bwa(fasta: &std::path::Path, budget: u64, fail_from: Option<usize>) {
    let tmp = tempfile::tempdir().unwrap();
    let ours = copy_into(fasta, &mkdir(tmp.path().join("ours")));
    let events = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = events.clone();
    let opts = BuildOptions {
        sort_budget_bytes: budget,
        sorter: Some(Box::new(move || {
            let mut model = RadixModel::new(RADIX_TILE);
            model.fail_from = fail_from;
            Ok(Box::new(model) as Box<dyn ChunkSorter>)
        })),
        events: Some(Box::new(move |e: &SortEvent| seen.borrow_mut().push(e.clone()))),
        ..BuildOptions::default()
    };
    build_index(&ours, &ours, opts).unwrap();
    let theirs = copy_into(fasta, &mkdir(tmp.path().join("bwa")));
    bwa(&["index", theirs.to_str().unwrap()]);
    for ext in INDEX_EXTS {
        assert!(
            std::fs::read(with_ext(&ours, ext)).unwrap() == std::fs::read(with_ext(&theirs, ext)).unwrap(),
            "{}{ext} differs from bwa's (sorter build)",
            fasta.display()
        );
    }
    let events = events.borrow();
    let chunks: Vec<_> =
        events.iter().filter_map(|e| if let SortEvent::Chunk(c) = e { Some(c.clone()) } else { None }).collect();
    assert!(chunks.len() > 1, "several chunks: {}", chunks.len());
    let fallbacks = events.iter().filter(|e| matches!(e, SortEvent::Fallback { .. })).count();
    assert_eq!(fallbacks, fail_from.is_some() as usize);
    let on_cpu = chunks.iter().filter(|c| c.on == SortedOn::Cpu).count();
    assert_eq!(on_cpu, fail_from.map_or(0, |f| chunks.len() - f));
    assert!(matches!(events.last(), Some(SortEvent::Done(_))));
}

#[test]
fn sorter_build_is_identical() {
    assert_sorter_build_same_as_bwa(&testdata("multi.fa"), 16 * 64, None);
    assert_sorter_build_same_as_bwa(&data("lambda.fa"), 16 * 20_000, None);
    assert_sorter_build_same_as_bwa(&data("ecoli536.fa"), 16 << 20, Some(2));
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
        let out = String::from_utf8(bwa(&[
            "samse",
            prefix.to_str().unwrap(),
            sai.to_str().unwrap(),
            reads.to_str().unwrap(),
        ]))
        .unwrap();
        out.lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect::<Vec<_>>()
    };
    let (a, b) = (sam(&ours), sam(&theirs));
    assert_eq!(a.len(), b.len());
    assert!(a.len() > 2000);
    assert_eq!(a, b);
}
