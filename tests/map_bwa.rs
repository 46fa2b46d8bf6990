//! `bcuda map` against `bwa aln` + `bwa samse`/`sampe` (and `samtools sort` of their SAM with
//! --sort): the same records, single and paired, SAM, BAM and sorted BAM, with a read group;
//! the sorted BAM's index read by samtools.

mod common;

use std::path::Path;

use common::*;

const RG: &str = "@RG\\tID:lib1\\tSM:sample1";

/// SAM text without its @PG line (bwa's and ours differ there only).
fn without_pg(sam: &[u8]) -> String {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(|l| format!("{l}\n")).collect()
}

/// bwa's records for these reads: samse for one file, sampe for two.
fn bwa_sam(prefix: &Path, reads: &[&Path], dir: &Path) -> Vec<u8> {
    let prefix = prefix.to_str().unwrap();
    let mut sai = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        let path = dir.join(format!("bwa{i}.sai"));
        std::fs::write(&path, bwa(&["aln", prefix, r.to_str().unwrap()])).unwrap();
        sai.push(path.to_str().unwrap().to_string());
    }
    let reads: Vec<&str> = reads.iter().map(|r| r.to_str().unwrap()).collect();
    let mut args = vec![if reads.len() == 1 { "samse" } else { "sampe" }, "-r", RG, prefix];
    args.extend(sai.iter().map(String::as_str));
    args.extend(reads);
    bwa(&args)
}

fn samtools_view(bam: &Path) -> Vec<u8> {
    run("samtools", &["view", "-h", bam.to_str().unwrap()])
}

/// bcuda map's output for these reads, as SAM text (BAM through samtools view).
fn map(prefix: &Path, reads: &[&Path], out: &Path, extra: &[&str]) -> Vec<u8> {
    let out_s = out.to_str().unwrap();
    let mut args = vec!["map", "--quiet", "-R", RG, "-o", out_s];
    args.extend(extra);
    args.push(prefix.to_str().unwrap());
    args.extend(reads.iter().map(|r| r.to_str().unwrap()));
    bcuda(&args);
    if out_s.to_ascii_lowercase().ends_with(".bam") {
        samtools_view(out)
    } else {
        std::fs::read(out).unwrap()
    }
}

#[test]
fn single_reads_as_sam_and_bam() {
    let f = fixture("ecoli536.fa", "ecoli536_art.fq", 4000);
    let expected = without_pg(&bwa_sam(&f.prefix, &[&f.reads], f.dir.path()));
    assert!(expected.lines().filter(|l| !l.starts_with('@')).count() == 4000);
    assert_eq!(without_pg(&map(&f.prefix, &[&f.reads], &f.dir.path().join("out.sam"), &[])), expected);
    assert_eq!(without_pg(&map(&f.prefix, &[&f.reads], &f.dir.path().join("out.BAM"), &["-t", "2"])), expected);
}

#[test]
fn pairs_as_sam_and_bam_with_sai_files() {
    let f = pair_fixture("ecoli536.fa", "ecoli536_artpe", 3000);
    let reads = [f.reads[0].as_path(), f.reads[1].as_path()];
    let expected = without_pg(&bwa_sam(&f.prefix, &reads, f.dir.path()));
    assert_eq!(without_pg(&map(&f.prefix, &reads, &f.dir.path().join("out.sam"), &[])), expected);
    let sai = f.dir.path().join("kept");
    assert_eq!(
        without_pg(&map(&f.prefix, &reads, &f.dir.path().join("out.bam"), &["--sai", sai.to_str().unwrap()])),
        expected
    );
    for end in 0..2 {
        let ours = std::fs::read(f.dir.path().join(format!("kept_{}.sai", end + 1))).unwrap();
        assert_eq!(ours, std::fs::read(f.dir.path().join(format!("bwa{end}.sai"))).unwrap(), "--sai end {}", end + 1);
    }
}

/// `samtools sort` of bwa's SAM: the records ours must equal, and the header less @PG and @HD.
fn samtools_sorted(sam: &[u8], dir: &Path) -> (String, String) {
    let (sam_path, bam_path) = (dir.join("bwa.sam"), dir.join("bwa.sorted.bam"));
    std::fs::write(&sam_path, sam).unwrap();
    run("samtools", &["sort", "-o", bam_path.to_str().unwrap(), sam_path.to_str().unwrap()]);
    split_header(&samtools_view(&bam_path))
}

/// (header lines but @HD and @PG, records).
fn split_header(sam: &[u8]) -> (String, String) {
    let text = without_pg(sam);
    let (header, records): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('@'));
    (header.iter().filter(|l| !l.starts_with("@HD")).map(|l| format!("{l}\n")).collect(), records.join("\n"))
}

fn check_sorted(prefix: &Path, reads: &[&Path], dir: &Path, extra: &[&str]) {
    let expected = samtools_sorted(&bwa_sam(prefix, reads, dir), dir);
    let out = dir.join("sorted.bam");
    let mut args = vec!["--sort"];
    args.extend(extra);
    let ours = map(prefix, reads, &out, &args);
    assert!(String::from_utf8_lossy(&ours).starts_with("@HD\tVN:1.6\tSO:coordinate\n"));
    assert_eq!(split_header(&ours), expected);
    // The index beside it, as samtools reads it: every record counted (mapped and unmapped).
    assert!(Path::new(&format!("{}.bai", out.display())).exists());
    let stats = String::from_utf8(run("samtools", &["idxstats", out.to_str().unwrap()])).unwrap();
    let counted: u64 =
        stats.lines().map(|l| l.split('\t').skip(2).map(|n| n.parse::<u64>().unwrap()).sum::<u64>()).sum();
    assert_eq!(counted as usize, expected.1.lines().count(), "{stats}");
    let region =
        run("samtools", &["view", "-c", out.to_str().unwrap(), &format!("{}:1000-20000", first_reference(prefix))]);
    assert!(String::from_utf8(region).unwrap().trim().parse::<u64>().unwrap() > 0, "a region query through the index");
}

fn first_reference(prefix: &Path) -> String {
    let fasta = std::fs::read_to_string(prefix).unwrap();
    fasta.lines().next().unwrap()[1..].split_whitespace().next().unwrap().to_string()
}

#[test]
fn sorted_single_reads_with_index() {
    let f = fixture("lambda.fa", "lambda_art.fq", 5000);
    check_sorted(&f.prefix, &[&f.reads], f.dir.path(), &[]);
}

/// Pairs over 1 MiB of records with --sort-memory 1: sorted runs merged from temporary files.
#[test]
fn sorted_pairs_merged_from_runs() {
    let f = pair_fixture("ecoli536.fa", "ecoli536_artpe", 6000);
    check_sorted(&f.prefix, &[&f.reads[0], &f.reads[1]], f.dir.path(), &["--sort-memory", "1"]);
}

#[test]
fn sort_needs_a_bam_and_formats_not_written_are_refused() {
    let f = fixture("lambda.fa", "lambda_art.fq", 10);
    let (prefix, reads) = (f.prefix.to_str().unwrap(), f.reads.to_str().unwrap());
    assert!(bcuda_fails(&["map", "--sort", prefix, reads]).contains("--sort needs an output file"));
    assert!(bcuda_fails(&["map", "--sort", "-o", "x.sam", prefix, reads]).contains("--sort writes BAM"));
    for name in ["x.cram", "x.sam.gz"] {
        let out = f.dir.path().join(name);
        assert!(bcuda_fails(&["map", "-o", out.to_str().unwrap(), prefix, reads]).contains("not supported"));
        assert!(!out.exists());
    }
    assert!(bcuda_fails(&["map", "--aln", "-f x.sai", prefix, reads]).contains("--sai"));
    assert!(bcuda_fails(&["map", "--aln", "-l 0", prefix, reads]).contains("--aln"));
}

/// Options pass through: aln's seed length and sampe's maximum insert size give bwa's records
/// with the same options.
#[test]
fn aln_and_sampe_options_pass_through() {
    let f = pair_fixture("lambda.fa", "lambda_pe250", 1500);
    let (prefix, dir) = (f.prefix.to_str().unwrap(), f.dir.path());
    let mut sai = Vec::new();
    for (i, r) in f.reads.iter().enumerate() {
        let path = dir.join(format!("o{i}.sai"));
        std::fs::write(&path, bwa(&["aln", "-l", "20", "-k", "1", prefix, r.to_str().unwrap()])).unwrap();
        sai.push(path.to_str().unwrap().to_string());
    }
    let (r0, r1) = (f.reads[0].to_str().unwrap(), f.reads[1].to_str().unwrap());
    let expected = without_pg(&bwa(&["sampe", "-a", "300", "-o", "50", prefix, &sai[0], &sai[1], r0, r1]));
    let out = dir.join("o.sam");
    bcuda(&[
        "map",
        "--quiet",
        "--aln",
        "-l 20 -k 1",
        "--sampe",
        "-a 300 -o 50",
        "-o",
        out.to_str().unwrap(),
        prefix,
        r0,
        r1,
    ]);
    let ours = std::fs::read(&out).unwrap();
    assert_eq!(without_pg(&ours), expected);
    let pg = String::from_utf8_lossy(&ours).lines().find(|l| l.starts_with("@PG")).unwrap().to_string();
    assert!(pg.contains("-l 20 -k 1") && pg.contains("-a 300 -o 50") && pg.contains(prefix), "{pg}");
}
