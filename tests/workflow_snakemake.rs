//! The Snakemake workflow (workflow/Snakefile) run locally on the CPU path: E. coli ART reads,
//! gzip, cut into 3 shards aligned as separate jobs, merged, samse to BAM. Its .sai must equal
//! one `bcuda aln` (and `bwa aln`) over the whole file, byte for byte, and its BAM must hold the
//! same header and records as `bcuda samse -o x.bam` on that .sai.
//!
//! Needs snakemake (`pip install snakemake`; .ci/run installs it). Without it the test says it
//! was skipped, except under CI (CI set), where that is a failure.

mod common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// The command that runs snakemake: $SNAKEMAKE, `snakemake`, or `python3 -m snakemake`.
fn snakemake() -> Option<Vec<String>> {
    let candidates: Vec<Vec<String>> = match std::env::var("SNAKEMAKE") {
        Ok(cmd) => vec![cmd.split_whitespace().map(String::from).collect()],
        Err(_) => vec![vec!["snakemake".into()], vec!["python3".into(), "-m".into(), "snakemake".into()]],
    };
    candidates.into_iter().find(|cmd| Command::new(&cmd[0]).args(&cmd[1..]).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// SAM header lines other than @PG (whose command lines differ) and all records of a BAM.
fn header_and_records(bam: &Path) -> (Vec<String>, Vec<u8>) {
    let bam = bam.to_str().unwrap();
    let header = String::from_utf8(run("samtools", &["view", "-H", bam])).unwrap();
    let header = header.lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect();
    (header, run("samtools", &["view", bam]))
}

#[test]
fn sharded_workflow_equals_one_aln_and_samse() {
    let Some(snakemake) = snakemake() else {
        assert!(std::env::var_os("CI").is_none(), "snakemake is not installed, and CI must run this test: .ci/run installs it with pip");
        eprintln!("SKIPPED sharded_workflow_equals_one_aln_and_samse: snakemake not found (pip install snakemake, or set SNAKEMAKE)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The workflow indexes the reference itself (its `index` rule).
    std::fs::copy(data("ecoli536.fa"), dir.join("ref.fa")).unwrap();
    let plain = dir.join("plain.fq");
    head_fastq(&data("ecoli536_art.fq"), 20_000, &plain);
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(dir.join("reads.fq.gz")).unwrap(), flate2::Compression::fast());
    gz.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    gz.finish().unwrap();

    // JSON is YAML. One aln thread per job, so the merged header's -t is 1, as below.
    let config = serde_json::json!({
        "bcuda": env!("CARGO_BIN_EXE_bcuda"),
        "reference": "ref.fa",
        "samples": {"ecoli": "reads.fq.gz"},
        "shards": 3,
        "compress_shards": true,
        "aln_threads": 1,
        "device": "cpu",
        "gpus_per_job": 0,
        "samse_threads": 2,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let snakefile = repo().join("workflow").join("Snakefile");
    let out = Command::new(&snakemake[0])
        .args(&snakemake[1..])
        .args(["--snakefile", snakefile.to_str().unwrap(), "--configfile", "config.json", "--cores", "2", "--quiet"])
        .current_dir(dir)
        // The index rule's `bcuda index` records a default index: in the test's folder, not the user's.
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .output()
        .unwrap();
    assert!(out.status.success(), "snakemake failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join("shards/ecoli/0000.fq.gz").exists(), "the shards are temporary");

    let (sharded_sai, sharded_bam) = (dir.join("results/ecoli.sai"), dir.join("results/ecoli.bam"));
    let (prefix, reads) = (dir.join("ref.fa"), dir.join("reads.fq.gz"));
    let (p, r) = (prefix.to_str().unwrap(), reads.to_str().unwrap());
    let whole = bcuda(&["aln", "--quiet", "--cpu", p, r]);
    let sharded = std::fs::read(&sharded_sai).unwrap();
    assert!(whole.len() > 20_000 * 4 + 68, "aln wrote too little");
    assert!(sharded == whole, "the workflow's .sai differs from one bcuda aln ({} vs {} bytes)", sharded.len(), whole.len());
    assert!(bwa(&["aln", p, r]) == whole, "bwa aln over the whole file differs");

    let single_sai = dir.join("single.sai");
    std::fs::write(&single_sai, &whole).unwrap();
    let single_bam = dir.join("single.bam");
    bcuda(&["samse", "--quiet", "-o", single_bam.to_str().unwrap(), p, single_sai.to_str().unwrap(), r]);
    let (header, records) = header_and_records(&single_bam);
    let (sharded_header, sharded_records) = header_and_records(&sharded_bam);
    assert_eq!(sharded_header, header);
    assert_eq!(records.iter().filter(|&&b| b == b'\n').count(), 20_000);
    assert!(sharded_records == records, "the workflow's BAM records differ from samse's");
}
