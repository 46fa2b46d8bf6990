//! `bcuda sampe` writes the same SAM records as `bwa sampe` 0.7.17 (all but the @PG line), from
//! .sai files of `bwa aln` or `bcuda aln`, on paired reads of dwgsim (several insert sizes and
//! read lengths, random pairs) and ART, under sampe's option sets; and bad input is an error.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn without_pg(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect()
}

/// Which aligner writes the .sai files (their .sai are identical; both are used).
#[derive(Clone, Copy, Debug)]
enum Aln {
    Bwa,
    Bcuda,
}

/// `aln` of each end with its options; returns the two .sai paths.
fn align_ends(prefix: &Path, reads: &[PathBuf; 2], aln: Aln, aln_opts: [&[&str]; 2]) -> [PathBuf; 2] {
    [0, 1].map(|e| {
        let sai = reads[e].with_extension(format!("{aln:?}{}.sai", aln_opts[e].join("")));
        let args = command_line("aln", aln_opts[e], &[prefix.to_str().unwrap(), reads[e].to_str().unwrap()]);
        let out = match aln {
            Aln::Bwa => bwa(&args),
            Aln::Bcuda => bcuda(&quiet(args)),
        };
        std::fs::write(&sai, out).unwrap();
        sai
    })
}

/// bwa sampe and bcuda sampe with `opts` on the same .sai files: same SAM records.
fn assert_same_sam(prefix: &Path, reads: &[PathBuf; 2], sai: &[PathBuf; 2], opts: &[&str]) -> Vec<String> {
    let positional = [prefix, &sai[0], &sai[1], &reads[0], &reads[1]].map(|p| p.to_str().unwrap());
    let args = command_line("sampe", opts, &positional);
    let theirs = without_pg(&bwa(&args));
    let ours = without_pg(&bcuda(&quiet(args)));
    let what = format!("{} {:?} {opts:?}", reads[0].display(), sai[0].file_name().unwrap());
    assert_eq!(ours.len(), theirs.len(), "{what}: record counts differ");
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b, "{what}");
    }
    ours
}

fn records(sam: &[String]) -> impl Iterator<Item = Vec<&str>> {
    sam.iter().filter(|l| !l.starts_with('@')).map(|l| l.split('\t').collect())
}

#[test]
fn lambda_dwgsim_pairs_under_option_sets() {
    let PairFixture { dir: _dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 5000);
    let sai = align_ends(&prefix, &reads, Aln::Bwa, [&[], &[]]);
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(sam.iter().any(|l| l.contains("XT:A:M")), "no mate rescued");
    assert!(records(&sam).any(|f| f[1].parse::<u32>().unwrap() & 0x2 != 0), "no proper pair");
    assert!(records(&sam).any(|f| f[1].parse::<u32>().unwrap() & 0xc == 0xc), "no unmapped pair");
    for opts in [
        &["-a", "300"][..],
        &["-n", "1", "-N", "2"],
        &["-s"],
        &["-A"],
        &["-r", "@RG\\tID:x\\tSM:y"],
        &["-o", "10", "-c", "0.01"],
        &["-P"],
    ] {
        assert_same_sam(&prefix, &reads, &sai, opts);
    }
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    assert_same_sam(&prefix, &reads, &sai, &[]);
}

#[test]
fn lambda_dwgsim_lengths_indels_and_trimming() {
    let PairFixture { dir: _dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe70", 5000);
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(records(&sam).any(|f| f[5].contains('I') || f[5].contains('D')), "no gapped CIGAR");
    assert_same_sam(&prefix, &reads, &sai, &["-n", "1", "-N", "2", "-a", "300"]);
    // Each end is read with its own .sai's options: -q trimming on one end only.
    let sai = align_ends(&prefix, &reads, Aln::Bwa, [&["-q", "20"], &["-n", "2", "-o", "0"]]);
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(sam.iter().any(|l| l.contains("XC:i:")));
    for name in ["lambda_pe36", "lambda_pe250"] {
        let PairFixture { dir: _d, prefix, reads } = pair_fixture("lambda.fa", name, 3000);
        let sai = align_ends(&prefix, &reads, Aln::Bwa, [&[], &[]]);
        assert_same_sam(&prefix, &reads, &sai, &[]);
        assert_same_sam(&prefix, &reads, &sai, &["-A"]);
    }
}

#[test]
fn ecoli_dwgsim_pairs() {
    let PairFixture { dir: _dir, prefix, reads } = pair_fixture("ecoli536.fa", "ecoli536_pe500", 20000);
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(sam.iter().any(|l| l.contains("XA:Z:")), "no XA");
    assert_same_sam(&prefix, &reads, &sai, &["-o", "10", "-n", "1", "-N", "2"]);
}

#[test]
fn ecoli_art_pairs() {
    let PairFixture { dir: _dir, prefix, reads } = pair_fixture("ecoli536.fa", "ecoli536_artpe", 15000);
    let sai = align_ends(&prefix, &reads, Aln::Bwa, [&[], &[]]);
    assert_same_sam(&prefix, &reads, &sai, &[]);
    assert_same_sam(&prefix, &reads, &sai, &["-a", "300", "-s"]);
}

/// A reference of several sequences, lambda cut in two among them: pairs across the cut
/// have their mates on different sequences.
#[test]
fn mates_on_different_sequences() {
    let tmp = tempfile::tempdir().unwrap();
    let lambda: String = std::fs::read_to_string(data("lambda.fa")).unwrap().lines().skip(1).collect();
    let demo = std::fs::read_to_string(testdata("demo_ref.fa")).unwrap();
    let fasta = tmp.path().join("split.fasta");
    std::fs::write(&fasta, format!(">chrA\n{}\n>chrB\n{}\n{demo}", &lambda[..24000], &lambda[24000..])).unwrap();
    let prefix = tmp.path().join("split.fa");
    std::fs::rename(&fasta, &prefix).unwrap();
    bwa(&["index", prefix.to_str().unwrap()]);
    let reads = [1, 2].map(|e| data(&format!("lambda_pe70_{e}.fq")));
    let sai = [1, 2].map(|e| tmp.path().join(format!("{e}.sai")));
    for e in 0..2 {
        std::fs::write(&sai[e], bwa(&["aln", prefix.to_str().unwrap(), reads[e].to_str().unwrap()])).unwrap();
    }
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(records(&sam).any(|f| f[6] != "=" && f[6] != "*"), "no mates on different sequences");
}

fn sampe_args<'a>(out: &'a str, prefix: &'a str, sai: &'a [String; 2], reads: &'a [String; 2]) -> Vec<&'a str> {
    vec!["sampe", "--quiet", "-f", out, prefix, &sai[0], &sai[1], &reads[0], &reads[1]]
}

#[test]
fn bam_and_file_outputs_hold_the_same_records() {
    let PairFixture { dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 1000);
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (p, sai, reads) = (s(&prefix), sai.each_ref().map(|x| s(x)), reads.each_ref().map(|x| s(x)));
    let sam = without_pg(&bcuda(&["sampe", "--quiet", &p, &sai[0], &sai[1], &reads[0], &reads[1]]));
    let bam = s(&dir.path().join("out.bam"));
    bcuda(&["sampe", "--quiet", "-o", &bam, &p, &sai[0], &sai[1], &reads[0], &reads[1]]);
    assert_eq!(without_pg(&run("samtools", &["view", "-h", &bam])), sam);
    let sam_file = s(&dir.path().join("out.sam"));
    bcuda(&sampe_args(&sam_file, &p, &sai, &reads));
    assert_eq!(without_pg(&std::fs::read(&sam_file).unwrap()), sam);
}

#[test]
fn mates_that_do_not_pair_up_are_errors() {
    let PairFixture { dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 300);
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = dir.path().join("out.sam");
    let (o, p) = (s(&out), s(&prefix));
    let sai_s = sai.each_ref().map(|x| s(x));

    // Fewer second reads (and their .sai).
    let few = dir.path().join("few_2.fq");
    head_fastq(&reads[1], 200, &few);
    let few_sai = dir.path().join("few_2.sai");
    std::fs::write(&few_sai, bcuda(&["aln", "--quiet", &p, &s(&few)])).unwrap();
    let err = bcuda_fails(&sampe_args(&o, &p, &[sai_s[0].clone(), s(&few_sai)], &[s(&reads[0]), s(&few)]));
    assert!(err.contains("few_2.fq") && err.contains("read 200") && err.contains("not pairs"), "{err}");
    assert!(!out.exists());

    // Names that differ: the second file shifted by one pair.
    let text = std::fs::read_to_string(&reads[1]).unwrap();
    let shifted = dir.path().join("shifted_2.fq");
    std::fs::write(&shifted, text.lines().skip(4).chain(text.lines().take(4)).collect::<Vec<_>>().join("\n") + "\n")
        .unwrap();
    let err = bcuda_fails(&sampe_args(&o, &p, &sai_s, &[s(&reads[0]), s(&shifted)]));
    assert!(err.contains("shifted_2.fq") && err.contains("read 1 ") && err.contains("different names"), "{err}");
    assert!(!out.exists());

    // The .sai of the other end with fewer records than the reads.
    let err = bcuda_fails(&sampe_args(&o, &p, &[sai_s[0].clone(), s(&few_sai)], &[s(&reads[0]), s(&reads[1])]));
    assert!(err.contains("few_2.sai") && err.contains("read 201"), "{err}");
    assert!(!out.exists());
}

#[test]
fn sai_of_another_index_or_swapped_files_are_errors() {
    let PairFixture { dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 200);
    let sai = align_ends(&prefix, &reads, Aln::Bwa, [&[], &[]]);
    let small = bwa_index(&testdata("demo_ref.fa"), dir.path());
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = dir.path().join("out.sam");
    let (o, sai_s, reads_s) = (s(&out), sai.each_ref().map(|x| s(x)), reads.each_ref().map(|x| s(x)));
    let err = bcuda_fails(&sampe_args(&o, &s(&small), &sai_s, &reads_s));
    assert!(err.contains(".sai") && err.contains("another index"), "{err}");
    assert!(!out.exists());
    // Reads given where the .sai files go, and the other way round.
    let p = s(&prefix);
    let err = bcuda_fails(&["sampe", "--quiet", "-f", &o, &p, &reads_s[0], &reads_s[1], &sai_s[0], &sai_s[1]]);
    assert!(err.contains("lambda_pe300_1.fq"), "{err}");
    assert!(!out.exists());
}

#[test]
fn default_index_short_form() {
    let PairFixture { dir: _dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 300);
    let sai = align_ends(&prefix, &reads, Aln::Bcuda, [&[], &[]]);
    let args = [&sai[0], &sai[1], &reads[0], &reads[1]].map(|p| p.to_str().unwrap());
    let explicit = bcuda(&[&["sampe", "--quiet", prefix.to_str().unwrap()][..], &args].concat());
    let out =
        common::bcuda_command().env("BCUDA_INDEX", &prefix).args([&["sampe"][..], &args].concat()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[bcuda sampe] index"));
    assert_eq!(without_pg(&out.stdout), without_pg(&explicit));
}

/// The demo pairs: a reference with N runs and IUPAC codes (XN), a repeat, one end too
/// mutated for aln (rescued) or random.
#[test]
fn demo_pairs() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let reads = [1, 2].map(|e| testdata(&format!("demo_{e}.fq")));
    let sai = [1, 2].map(|e| tmp.path().join(format!("{e}.sai")));
    for e in 0..2 {
        std::fs::write(&sai[e], bwa(&["aln", prefix.to_str().unwrap(), reads[e].to_str().unwrap()])).unwrap();
    }
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(sam.iter().any(|l| l.contains("XT:A:M")) && sam.iter().any(|l| l.contains("XA:Z:")));
    assert_same_sam(&prefix, &reads, &sai, &["-a", "250", "-N", "1"]);
}

/// FASTA reads (no qualities): aligned whole (no trimming), `*` qualities; bcuda aln's .sai
/// equals bwa's.
#[test]
fn fasta_pairs() {
    let PairFixture { dir, prefix, reads } = pair_fixture("lambda.fa", "lambda_pe300", 1000);
    let fasta = [0, 1].map(|e| {
        let text = std::fs::read_to_string(&reads[e]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let fa: String = lines.chunks(4).map(|r| format!(">{}\n{}\n", &r[0][1..], r[1])).collect();
        let path = dir.path().join(format!("pairs_{}.fa", e + 1));
        std::fs::write(&path, fa).unwrap();
        path
    });
    let ours = align_ends(&prefix, &fasta, Aln::Bcuda, [&[], &[]]);
    let theirs = align_ends(&prefix, &fasta, Aln::Bwa, [&[], &[]]);
    for e in 0..2 {
        assert!(
            std::fs::read(&ours[e]).unwrap() == std::fs::read(&theirs[e]).unwrap(),
            "{}: .sai differs from bwa's",
            fasta[e].display()
        );
    }
    let sam = assert_same_sam(&prefix, &fasta, &theirs, &[]);
    assert!(records(&sam).all(|f| f[10] == "*"));
}

/// A 16 kbp tandem array (a 23 bp unit, a tenth of the copies random) inside lambda: ends with
/// hundreds of hits, pairs chosen among them, `-o` cutting some off.
#[test]
fn pairs_in_a_tandem_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let lambda: String = std::fs::read_to_string(data("lambda.fa")).unwrap().lines().skip(1).collect();
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let mut base = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b"ACGT"[(x >> 40) as usize % 4] as char
    };
    let unit: String = (0..23).map(|_| base()).collect();
    let array: String =
        (0..700).map(|i| if i % 10 == 9 { (0..23).map(|_| base()).collect() } else { unit.clone() }).collect();
    let prefix = tmp.path().join("rep.fa");
    std::fs::write(&prefix, format!(">rep\n{}{array}{}\n", &lambda[..20000], &lambda[20000..])).unwrap();
    bwa(&["index", prefix.to_str().unwrap()]);
    let sim = tmp.path().join("sim");
    run(
        "dwgsim",
        &[
            "-z",
            "9",
            "-N",
            "3000",
            "-1",
            "70",
            "-2",
            "70",
            "-d",
            "300",
            "-s",
            "30",
            "-y",
            "0.02",
            "-o",
            "1",
            prefix.to_str().unwrap(),
            sim.to_str().unwrap(),
        ],
    );
    let reads = [1, 2].map(|e| {
        let gz = tmp.path().join(format!("sim.bwa.read{e}.fastq.gz"));
        let fq = tmp.path().join(format!("sim_{e}.fq"));
        std::fs::write(&fq, run("gzip", &["-dc", gz.to_str().unwrap()])).unwrap();
        fq
    });
    let sai = align_ends(&prefix, &reads, Aln::Bwa, [&[], &[]]);
    let sam = assert_same_sam(&prefix, &reads, &sai, &[]);
    assert!(sam.iter().any(|l| l.contains("XT:A:R")), "no repeat hits");
    assert_same_sam(&prefix, &reads, &sai, &["-o", "100", "-n", "5", "-N", "20"]);
}
