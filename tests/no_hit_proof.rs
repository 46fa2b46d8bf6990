//! `bcuda-dev no-hit`: the proof that a read has no alignment within `max_diff` edits never
//! answers a read bwa has a hit for (the tool itself fails on one, checking bwa's `.sai`), and
//! it answers random reads, with bwa's default options and with ancient DNA's.

mod common;

use common::*;

/// `n` seeded random reads of 36 to 75 bases, as FASTQ.
fn random_reads(n: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            let len = 36 + (next() % 40) as usize;
            let seq: String = (0..len).map(|_| b"ACGT"[(next() % 4) as usize] as char).collect();
            format!("@random_{i}\n{seq}\n+\n{}\n", "I".repeat(len))
        })
        .collect()
}

/// The answered line's count, from the tool's report.
fn answered(report: &str) -> usize {
    let line = report.lines().find(|l| l.starts_with("no alignment within max_diff")).expect(report);
    line.split(": ").nth(1).unwrap().split('\t').next().unwrap().parse().unwrap()
}

#[test]
fn reads_proven_to_have_no_alignment_have_no_hit_in_bwas_sai() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = dir.path().join("ecoli536.fa");
    std::fs::copy(data("ecoli536.fa"), &fasta).unwrap();
    let fasta = fasta.to_str().unwrap();
    bcuda(&["index", "-q", "--not-default", fasta]);
    let art = std::fs::read_to_string(data("ecoli536_art.fq")).unwrap();
    let mapped: String = art.lines().take(8000).map(|l| format!("{l}\n")).collect();
    let reads = dir.path().join("reads.fq");
    std::fs::write(&reads, mapped + &random_reads(2000)).unwrap();
    let reads = reads.to_str().unwrap();
    for (n, extra) in [("0.04", &[][..]), ("0.01", &["-l", "1024", "-o", "2"][..])] {
        let sai = dir.path().join(format!("n{n}.sai"));
        let args: Vec<&str> =
            ["aln", "-n", n].iter().copied().chain(extra.iter().copied()).chain([fasta, reads]).collect();
        std::fs::write(&sai, bwa(&args)).unwrap();
        let report =
            String::from_utf8(bcuda_dev(&["no-hit", "-n", n, "--sai", sai.to_str().unwrap(), fasta, reads])).unwrap();
        assert!(report.contains("every answered read has no hit in the .sai"), "{report}");
        let proven = answered(&report);
        assert!((1900..=2000 + 50).contains(&proven), "-n {n}: {proven} reads answered\n{report}");
    }
    // The check bites: a proof allowing one edit answers reads bwa finds with two.
    let sai = dir.path().join("n0.04.sai");
    let out = std::process::Command::new(bcuda_dev_path())
        .args(["no-hit", "-n", "1", "--sai", sai.to_str().unwrap(), fasta, reads])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("but bwa has"));
}
