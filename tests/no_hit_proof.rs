//! `bcuda-dev no-hit`: the proof that a read has no alignment within `max_diff` edits never
//! answers a read bwa has a hit for (the tool itself fails on one, checking bwa's `.sai`), and
//! it answers random reads, with bwa's default options, with ancient DNA's and with `-e`
//! (gap extensions that do not count against `-n`); so does the form the GPU's no-hit pass runs
//! (`--entries`: its stack's entries, its lookup limit checked at each pop).

mod common;

use common::*;

/// `n` seeded random reads of 36 to 75 bases, as FASTQ.
fn random_reads(n: usize) -> String {
    let mut next = bcuda::search::seeded::xorshift(0x2545_f491_4f6c_dd1d);
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
    let fasta = ecoli_index(&dir);
    let fasta = fasta.as_str();
    let art = std::fs::read_to_string(data("ecoli536_art.fq")).unwrap();
    let mapped: String = art.lines().take(8000).map(|l| format!("{l}\n")).collect();
    let reads = dir.path().join("reads.fq");
    std::fs::write(&reads, mapped + &random_reads(2000)).unwrap();
    let reads = reads.to_str().unwrap();
    let gpu_entries = bcuda::gpu::no_hit::ENTRIES.to_string();
    // Options, and the fewest of the 2000 random reads answered (with -e 3 up to 5 edits: some
    // short random reads align within 5 somewhere in E. coli).
    let option_sets: [(&str, &[&str], usize); 3] =
        [("0.04", &[], 1900), ("0.01", &["-l", "1024", "-o", "2"], 1900), ("2", &["-o", "2", "-e", "3"], 1800)];
    for (n, extra, fewest) in option_sets {
        let sai = dir.path().join(format!("n{n}.sai"));
        let args: Vec<&str> =
            ["aln", "-n", n].iter().copied().chain(extra.iter().copied()).chain([fasta, reads]).collect();
        std::fs::write(&sai, bwa(&args)).unwrap();
        // -e carries over: the proof allows its gap extensions beyond -n.
        let gape: Vec<&str> = extra.windows(2).filter(|w| w[0] == "-e").flat_map(|w| w.iter().copied()).collect();
        for form in [&[][..], &["--entries", gpu_entries.as_str()][..]] {
            let args: Vec<&str> = ["no-hit", "-n", n, "--sai", sai.to_str().unwrap()]
                .iter()
                .copied()
                .chain(gape.iter().copied())
                .chain(form.iter().copied())
                .chain([fasta, reads])
                .collect();
            let report = String::from_utf8(bcuda_dev(&args)).unwrap();
            assert!(report.contains("every answered read has no hit in the .sai"), "{report}");
            let proven = answered(&report);
            assert!((fewest..=2000 + 50).contains(&proven), "-n {n} {form:?}: {proven} reads answered\n{report}");
        }
    }
    // The check bites: a proof allowing one edit answers reads bwa finds with two.
    let sai = dir.path().join("n0.04.sai");
    let out = std::process::Command::new(bcuda_dev_path())
        .args(["no-hit", "-n", "1", "--sai", sai.to_str().unwrap(), fasta, reads])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("but bwa has"));
}

/// `n` reads of 60 bases from `genome` (FASTA) with 4 bases deleted in the middle, as FASTQ.
fn reads_with_a_deletion(genome: &str, n: usize) -> String {
    let seq: Vec<u8> = genome.lines().filter(|l| !l.starts_with('>')).flat_map(|l| l.trim().bytes()).collect();
    (0..n)
        .map(|i| {
            let at = (i * 7919 * 211) % (seq.len() - 100);
            let read: String = seq[at..at + 30].iter().chain(&seq[at + 34..at + 64]).map(|&b| b as char).collect();
            format!("@deletion_{i}\n{read}\n+\n{}\n", "I".repeat(60))
        })
        .collect()
}

/// With `-e`, bwa's gap extensions do not count against `-n`: a 4-base deletion is a hit at
/// `-n 2 -o 1 -e 3`, and the proof, told of `-e`, answers none of those reads; one that
/// allowed only `-n`'s edits would answer them (and the check against bwa's .sai fails it).
#[test]
fn gap_extensions_under_e_come_on_top_of_n() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let fasta = fasta.as_str();
    let reads = dir.path().join("deletions.fq");
    std::fs::write(&reads, reads_with_a_deletion(&std::fs::read_to_string(fasta).unwrap(), 200)).unwrap();
    let reads = reads.to_str().unwrap();
    let sai = dir.path().join("e.sai");
    std::fs::write(&sai, bwa(&["aln", "-n", "2", "-o", "1", "-e", "3", fasta, reads])).unwrap();
    let sai = sai.to_str().unwrap();
    let entries = bcuda::gpu::no_hit::ENTRIES.to_string();
    for form in [&[][..], &["--entries", entries.as_str()][..]] {
        let args: Vec<&str> = ["no-hit", "-n", "2", "-e", "3", "--sai", sai]
            .iter()
            .copied()
            .chain(form.iter().copied())
            .chain([fasta, reads])
            .collect();
        let report = String::from_utf8(bcuda_dev(&args)).unwrap();
        assert!(report.contains("every answered read has no hit in the .sai") && answered(&report) == 0, "{report}");
    }
    let out = std::process::Command::new(bcuda_dev_path())
        .args(["no-hit", "-n", "2", "--sai", sai, fasta, reads])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("but bwa has"));
}
