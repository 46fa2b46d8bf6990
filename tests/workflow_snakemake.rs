//! The Snakemake workflow (workflow/Snakefile) run locally on the CPU path with samples of its
//! own names (not the example's `ecoli`, which must not be added to them): `coli_se`, E. coli
//! ART reads, gzip, cut into 3 shards aligned as separate jobs, merged, samse; `coli_pe`, ART
//! pairs with a read group of its own, each end sharded and merged, sampe. Each .sai must equal
//! one `bcuda aln` (and `bwa aln`) over the whole file, byte for byte; each sorted BAM must hold
//! the records of `bcuda samse`/`sampe -r` on those .sai files, in coordinate order, with its
//! index, the read group in its header, and the default index left alone.
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
    candidates
        .into_iter()
        .find(|cmd| Command::new(&cmd[0]).args(&cmd[1..]).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// A BAM's header lines other than @PG (whose command lines differ), and its records sorted
/// as text (samtools sort leaves ties in its own order).
fn header_and_records(bam: &Path) -> (Vec<String>, Vec<String>) {
    let bam = bam.to_str().unwrap();
    let header = String::from_utf8(run("samtools", &["view", "-H", bam])).unwrap();
    let header = header.lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect();
    let mut records: Vec<String> =
        String::from_utf8(run("samtools", &["view", bam])).unwrap().lines().map(String::from).collect();
    records.sort();
    (header, records)
}

/// (reference name, position) of each record, in file order.
fn coordinates(bam: &Path) -> Vec<(String, u64)> {
    let text = String::from_utf8(run("samtools", &["view", bam.to_str().unwrap()])).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[2].to_string(), f[3].parse().unwrap())
        })
        .collect()
}

fn gzip(src: &Path, dst: &Path) {
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(dst).unwrap(), flate2::Compression::fast());
    gz.write_all(&std::fs::read(src).unwrap()).unwrap();
    gz.finish().unwrap();
}

/// The workflow's sorted BAM holds the same header (but @PG and @HD) and records as `expected`.
fn assert_same_alignments(workflow_bam: &Path, expected: &Path) {
    let (header, records) = header_and_records(expected);
    let (wf_header, wf_records) = header_and_records(workflow_bam);
    let wf_header: Vec<String> = wf_header.into_iter().filter(|l| !l.starts_with("@HD")).collect();
    assert_eq!(wf_header, header, "{}", workflow_bam.display());
    assert!(wf_records == records, "{}: the records differ from {}", workflow_bam.display(), expected.display());
    let at = coordinates(workflow_bam);
    let mapped: Vec<&(String, u64)> = at.iter().filter(|(r, _)| r != "*").collect();
    assert!(mapped.windows(2).all(|w| w[0] <= w[1]), "{} is not sorted by coordinate", workflow_bam.display());
    let hd = String::from_utf8(run("samtools", &["view", "-H", workflow_bam.to_str().unwrap()])).unwrap();
    assert!(hd.lines().any(|l| l.starts_with("@HD") && l.contains("SO:coordinate")), "{hd}");
}

#[test]
fn sharded_workflow_equals_one_aln_and_samse_or_sampe() {
    let Some(snakemake) = snakemake() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "snakemake is not installed, and CI must run this test: .ci/run installs it with pip"
        );
        eprintln!(
            "SKIPPED sharded_workflow_equals_one_aln_and_samse_or_sampe: snakemake not found (pip install snakemake, or set SNAKEMAKE)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The workflow indexes the reference itself (its `index` rule).
    std::fs::copy(data("ecoli536.fa"), dir.join("ref.fa")).unwrap();
    let plain = dir.join("plain.fq");
    head_fastq(&data("ecoli536_art.fq"), 10_000, &plain);
    gzip(&plain, &dir.join("reads.fq.gz"));
    for end in [1, 2] {
        head_fastq(&data(&format!("ecoli536_artpe_{end}.fq")), 4_000, &dir.join(format!("pe_{end}.fq")));
    }

    // JSON is YAML. One aln thread per job, so the merged header's -t is 1, as below.
    let read_group = r"@RG\tID:lane1\tSM:coli\tPL:ILLUMINA";
    let config = serde_json::json!({
        "bcuda": env!("CARGO_BIN_EXE_bcuda"),
        "reference": "ref.fa",
        "samples": {
            "coli_se": "reads.fq.gz",
            "coli_pe": {"reads": ["pe_1.fq", "pe_2.fq"], "read_group": read_group},
        },
        "shards": 3,
        "compress_shards": true,
        "aln_threads": 1,
        "device": "cpu",
        "gpus_per_job": 0,
        "samse_threads": 2,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let snakefile = repo().join("workflow").join("Snakefile");
    let config_home = dir.join("config");
    let out = Command::new(&snakemake[0])
        .args(&snakemake[1..])
        .args(["--snakefile", snakefile.to_str().unwrap(), "--configfile", "config.json", "--cores", "2", "--quiet"])
        .current_dir(dir)
        // Were the workflow to record a default index, it would be here, not in the user's folder.
        .env("XDG_CONFIG_HOME", &config_home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "snakemake failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("shards/coli_se/1/0000.fq.gz").exists(), "the shards are temporary");
    assert!(!dir.join("results/ecoli.bam").exists(), "the example's sample was added");
    assert!(!config_home.join("bcuda").join("default-index").exists(), "the workflow changed the default index");
    for file in [
        "results/coli_se.bam.bai",
        "results/coli_pe.bam.bai",
        "benchmarks/aln/coli_pe.2.0002.tsv",
        "benchmarks/sampe/coli_pe.tsv",
        "logs/coli_pe/sampe.log",
    ] {
        assert!(dir.join(file).exists(), "{file} is missing");
    }
    let versions = std::fs::read_to_string(dir.join("results/versions.yml")).unwrap();
    assert!(
        versions.contains(&format!("bcuda: {}", env!("CARGO_PKG_VERSION"))) && versions.contains("samtools: 1."),
        "{versions}"
    );

    let p = dir.join("ref.fa");
    let p = p.to_str().unwrap();
    let whole_sai = |reads: &str, name: &str| {
        let reads = dir.join(reads);
        let r = reads.to_str().unwrap();
        let whole = bcuda(&["aln", "--quiet", "--cpu", p, r]);
        let sharded = std::fs::read(dir.join("results").join(name)).unwrap();
        assert!(
            sharded == whole,
            "the workflow's {name} differs from one bcuda aln ({} vs {} bytes)",
            sharded.len(),
            whole.len()
        );
        assert!(bwa(&["aln", p, r]) == whole, "bwa aln over {} differs", reads.display());
        let path = dir.join(format!("whole.{name}"));
        std::fs::write(&path, whole).unwrap();
        path.to_str().unwrap().to_string()
    };

    let sai = whole_sai("reads.fq.gz", "coli_se.1.sai");
    let single_bam = dir.join("single.bam");
    let r = dir.join("reads.fq.gz");
    bcuda(&[
        "samse",
        "--quiet",
        "-r",
        r"@RG\tID:coli_se\tSM:coli_se",
        "-o",
        single_bam.to_str().unwrap(),
        p,
        &sai,
        r.to_str().unwrap(),
    ]);
    assert_same_alignments(&dir.join("results/coli_se.bam"), &single_bam);
    let (header, records) = header_and_records(&dir.join("results/coli_se.bam"));
    assert_eq!(records.len(), 10_000);
    assert!(header.contains(&"@RG\tID:coli_se\tSM:coli_se".to_string()), "{header:?}");

    let sai: Vec<String> = [1, 2].map(|end| whole_sai(&format!("pe_{end}.fq"), &format!("coli_pe.{end}.sai"))).to_vec();
    let pe = [1, 2].map(|end| dir.join(format!("pe_{end}.fq")));
    let pair_bam = dir.join("pair.bam");
    bcuda(&[
        "sampe",
        "--quiet",
        "-r",
        read_group,
        "-o",
        pair_bam.to_str().unwrap(),
        p,
        &sai[0],
        &sai[1],
        pe[0].to_str().unwrap(),
        pe[1].to_str().unwrap(),
    ]);
    assert_same_alignments(&dir.join("results/coli_pe.bam"), &pair_bam);
    let (header, records) = header_and_records(&dir.join("results/coli_pe.bam"));
    assert_eq!(records.len(), 8_000);
    assert!(header.contains(&"@RG\tID:lane1\tSM:coli\tPL:ILLUMINA".to_string()), "{header:?}");
    assert!(
        records.iter().all(|r| r.ends_with("\tRG:Z:lane1") || r.contains("\tRG:Z:lane1\t")),
        "records without the read group"
    );
}
