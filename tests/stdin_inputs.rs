//! `-` is standard input wherever a command reads a file (as in bwa): the `.sai` of `samse`
//! and `sampe` (`bcuda aln ref r.fq | bcuda samse ref - r.fq`), either read file of `sampe`,
//! a shard of `merge-sai`, the reads of `split-reads` and the FASTA of `index`; each gives the
//! output of the same file named. A second `-` in one command is an error.

mod common;

use common::*;
use std::io::Write;
use std::path::Path;

fn ok(run: (bool, Vec<u8>, String)) -> Vec<u8> {
    assert!(run.0, "{}", run.2);
    run.1
}

fn records(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect()
}

#[test]
fn sai_and_reads_from_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path();
    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let p = prefix.to_str().unwrap();
    let reads = [1, 2].map(|e| testdata(&format!("demo_{e}.fq")));
    let r = reads.each_ref().map(|r| r.to_str().unwrap());
    let sai_bytes = r.map(|r| bcuda(&["aln", "--quiet", p, r]));
    let sai = [0, 1].map(|e| tmp.path().join(format!("{e}.sai")));
    sai.iter().zip(&sai_bytes).for_each(|(path, bytes)| std::fs::write(path, bytes).unwrap());
    let s = sai.each_ref().map(|s| s.to_str().unwrap());

    // bcuda aln ref r.fq | bcuda samse ref - r.fq
    let from_files = records(&bcuda(&["samse", "--quiet", p, s[0], r[0]]));
    assert_eq!(
        records(&ok(bcuda_with_stdin(&["samse", "--quiet", p, "-", r[0]], &sai_bytes[0], Some(cfg)))),
        from_files
    );

    let pe = records(&bcuda(&["sampe", "--quiet", p, s[0], s[1], r[0], r[1]]));
    assert_eq!(
        records(&ok(bcuda_with_stdin(&["sampe", "--quiet", p, s[0], "-", r[0], r[1]], &sai_bytes[1], Some(cfg)))),
        pe
    );
    let reads2 = std::fs::read(&reads[1]).unwrap();
    assert_eq!(records(&ok(bcuda_with_stdin(&["sampe", "--quiet", p, s[0], s[1], r[0], "-"], &reads2, Some(cfg)))), pe);

    // One standard input only.
    for args in [vec!["samse", "--quiet", p, "-", "-"], vec!["sampe", "--quiet", p, "-", s[1], r[0], "-"]] {
        let (success, out, err) = bcuda_with_stdin(&args, &sai_bytes[0], Some(cfg));
        assert!(!success && out.is_empty(), "{args:?}");
        assert!(err.contains("'-' (standard input) is given for") && err.contains("only one input"), "{args:?}: {err}");
    }
    // An error about the .sai names standard input.
    let (success, _, err) = bcuda_with_stdin(&["samse", "--quiet", p, "-", r[0]], b"not a sai", Some(cfg));
    assert!(!success && err.contains("standard input: "), "{err}");
}

#[test]
fn split_reads_and_merge_sai_from_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path();
    let d = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let reads = testdata("demo.fq");
    let text = std::fs::read(&reads).unwrap();
    bcuda(&["split-reads", reads.to_str().unwrap(), &d("a1.fq"), &d("a2.fq.gz"), &d("a3.fq")]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    for (input, tag) in [(text.clone(), "plain"), (gz.finish().unwrap(), "gzip")] {
        ok(bcuda_with_stdin(&["split-reads", "-", &d("b1.fq"), &d("b2.fq.gz"), &d("b3.fq")], &input, Some(cfg)));
        for (a, b) in [("a1.fq", "b1.fq"), ("a3.fq", "b3.fq")] {
            assert_eq!(std::fs::read(d(a)).unwrap(), std::fs::read(d(b)).unwrap(), "{tag}: {b}");
        }
        let gunzip = |f: &str| run("gzip", &["-dc", &d(f)]);
        assert_eq!(gunzip("a2.fq.gz"), gunzip("b2.fq.gz"), "{tag}");
    }
    let (success, _, err) = bcuda_with_stdin(&["split-reads", "-", &d("c1.fq")], b"", Some(cfg));
    assert!(!success && err.contains("standard input"), "{err}");

    let prefix = bwa_index(&testdata("demo_ref.fa"), tmp.path());
    let p = prefix.to_str().unwrap();
    let shards: Vec<Vec<u8>> =
        ["a1.fq", "a2.fq.gz", "a3.fq"].iter().map(|s| bcuda(&["aln", "--quiet", p, &d(s)])).collect();
    for (i, bytes) in shards.iter().enumerate() {
        std::fs::write(d(&format!("s{i}.sai")), bytes).unwrap();
    }
    let merged = bcuda(&["merge-sai", &d("s0.sai"), &d("s1.sai"), &d("s2.sai")]);
    assert_eq!(merged, bcuda(&["aln", "--quiet", p, reads.to_str().unwrap()]));
    assert_eq!(ok(bcuda_with_stdin(&["merge-sai", &d("s0.sai"), "-", &d("s2.sai")], &shards[1], Some(cfg))), merged);
    let (success, _, err) = bcuda_with_stdin(&["merge-sai", "-", &d("s1.sai"), "-"], &shards[0], Some(cfg));
    assert!(!success && err.contains("only one input"), "{err}");
}

#[test]
fn index_from_standard_input_with_a_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path();
    let fasta = tmp.path().join("ref.fa");
    std::fs::copy(testdata("multi.fa"), &fasta).unwrap();
    bwa(&["index", fasta.to_str().unwrap()]);
    let from_stdin = tmp.path().join("piped");
    for input in [testdata("multi.fa"), testdata("multi.fa.gz")] {
        ok(bcuda_with_stdin(
            &["index", "-q", "--cpu", "-p", from_stdin.to_str().unwrap(), "-"],
            &std::fs::read(&input).unwrap(),
            Some(cfg),
        ));
        for ext in [".bwt", ".sa", ".pac", ".ann", ".amb"] {
            let name = |p: &Path| format!("{}{ext}", p.display());
            assert_eq!(
                std::fs::read(name(&from_stdin)).unwrap(),
                std::fs::read(name(&fasta)).unwrap(),
                "{}: {ext}",
                input.display()
            );
        }
    }
    let (success, _, err) = bcuda_with_stdin(&["index", "-q", "-"], b">a\nACGT\n", Some(cfg));
    assert!(!success && err.contains("-p PREFIX"), "{err}");
}
