//! `bcuda split-reads` then `aln` per shard then `bcuda merge-sai` gives the .sai of one
//! `aln` over the whole file, byte for byte, with bcuda's shards and with bwa's; mismatched or
//! cut shards are refused with the file named and nothing written.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Splits `reads` into `n` gzip shards in `dir`; returns their paths.
fn split(reads: &Path, dir: &Path, n: usize) -> Vec<PathBuf> {
    let shards: Vec<PathBuf> = (0..n).map(|i| dir.join(format!("shard{i}.fq.gz"))).collect();
    let mut args = vec!["split-reads", s(reads)];
    args.extend(shards.iter().map(|p| s(p)));
    bcuda(&args);
    shards
}

/// `aln` (bwa's or ours) of each shard with the options given per shard; returns the .sai paths.
fn align_shards(aligner: fn(&[&str]) -> Vec<u8>, prefix: &Path, shards: &[PathBuf], opts: &[&[&str]]) -> Vec<PathBuf> {
    shards
        .iter()
        .zip(opts)
        .map(|(shard, opts)| {
            let sai = PathBuf::from(s(shard).replace(".fq.gz", ".sai"));
            std::fs::write(&sai, aligner(&command_line("aln", opts, &[s(prefix), s(shard)]))).unwrap();
            sai
        })
        .collect()
}

fn merge(sais: &[PathBuf], extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["merge-sai"];
    args.extend(extra);
    args.extend(sais.iter().map(|p| s(p)));
    bcuda(&args)
}

#[test]
fn merged_shards_equal_one_run_of_bwa_and_of_bcuda() {
    let Fixture { dir, prefix, reads } = fixture("lambda.fa", "lambda_art.fq", 3000);
    let shards = split(&reads, dir.path(), 3);
    let whole_bwa = bwa(&["aln", s(&prefix), s(&reads)]);

    let bwa_sais = align_shards(bwa, &prefix, &shards, &[&[], &[], &[]]);
    assert!(merge(&bwa_sais, &[]) == whole_bwa, "bwa's shards merged differ from bwa aln over the whole file");

    // -t may differ between shards; the merged header takes the first shard's.
    let ours = |args: &[&str]| bcuda(&quiet(args.to_vec()));
    let our_sais = align_shards(ours, &prefix, &shards, &[&["-t", "2"], &[], &["-t", "2"]]);
    let whole_ours = bcuda(&["aln", "--quiet", "-t", "2", s(&prefix), s(&reads)]);
    let merged = dir.path().join("merged.sai");
    merge(&our_sais, &["-o", s(&merged)]);
    assert!(
        std::fs::read(&merged).unwrap() == whole_ours,
        "bcuda's shards merged differ from bcuda aln -t 2 over the whole file"
    );
    assert!(merge(&our_sais, &["-o", "-"]) == whole_ours, "-o - differs from the file");
}

#[test]
fn mismatched_or_cut_shards_are_refused_and_nothing_is_written() {
    let Fixture { dir, prefix, reads } = fixture("lambda.fa", "lambda_art.fq", 300);
    let shards = split(&reads, dir.path(), 2);
    let sais = align_shards(bwa, &prefix, &shards, &[&[], &["-M", "4"]]);
    let out = dir.path().join("out.sai");
    let err = bcuda_fails(&["merge-sai", "-o", s(&out), s(&sais[0]), s(&sais[1])]);
    assert!(err.contains("shard1.sai: aligned with other options than") && err.contains("(-M): 4 here, 3 in"), "{err}");
    assert!(!out.exists());

    let sais = align_shards(bwa, &prefix, &shards, &[&[], &[]]);
    let bytes = std::fs::read(&sais[1]).unwrap();
    std::fs::write(&sais[1], &bytes[..bytes.len() - 2]).unwrap();
    let err = bcuda_fails(&["merge-sai", "-o", s(&out), s(&sais[0]), s(&sais[1])]);
    assert!(err.contains("shard1.sai: read record 150 is cut short"), "{err}");
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            .count(),
        0
    );
}
