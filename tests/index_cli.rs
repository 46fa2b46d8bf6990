//! `bcuda index` on bad input: a clear error naming the file, and no index files left behind.
mod common;

use std::path::Path;

fn index(fasta: &Path) -> (bool, String) {
    let out = common::bcuda_command().args(["index", "-q"]).arg(fasta).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Indexing `content` fails with a message containing the file name and `expect`, and the
/// folder holds nothing but the input afterwards.
fn assert_rejected(name: &str, content: &[u8], expect: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let fa = tmp.path().join(name);
    std::fs::write(&fa, content).unwrap();
    let (ok, err) = index(&fa);
    assert!(!ok, "{name}: accepted");
    assert!(err.contains(name) && err.contains(expect), "{name}: unclear error: {err}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "{name}: files left behind: {left:?}");
}

#[test]
fn empty_file() {
    assert_rejected("empty.fa", b"", "empty");
}

#[test]
fn header_without_bases() {
    assert_rejected("nobases.fa", b">chr1\n\n>chr2\n", "empty");
}

#[test]
fn duplicated_names() {
    assert_rejected("dup.fa", b">chr1 a\nACGT\n>chr2\nGGGG\n>chr1 b\nTTTT\n", "'chr1' appears twice");
}

#[test]
fn not_fasta() {
    assert_rejected("reads.fa", b"@read1\nACGT\n+\nIIII\n", "not FASTA");
    assert_rejected("binary.fa", &[0u8, 1, 2, 3, 200, 100], "not FASTA");
}

#[test]
fn truncated_gzip() {
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::default());
        for i in 0..2000 {
            writeln!(enc, ">s{i}\nACGTACGTTTGACCA").unwrap();
        }
        enc.finish().unwrap();
    }
    assert_rejected("cut.fa.gz", &gz[..gz.len() / 2], "truncated gzip");
}

#[test]
fn fastq_as_reference() {
    assert_rejected("q.fa", b">chr1\nACGT\n+\nIIII\n", "FASTQ");
}

#[test]
fn header_that_is_not_text() {
    assert_rejected("latin1.fa", b">chr1 caf\xe9\nACGT\n", "not UTF-8");
}

/// `--cpu` builds on the CPU; `--gpu` without a usable GPU (CI) is an error that writes no
/// index files; both together are refused.
#[test]
fn cpu_and_gpu_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let fa = tmp.path().join("demo.fa");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo_ref.fa"), &fa).unwrap();
    let run = |flags: &[&str]| {
        let out = common::bcuda_command()
            .arg("index")
            .args(flags)
            .arg(&fa)
            .env("XDG_CONFIG_HOME", tmp.path())
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, err) = run(&["--cpu", "--gpu"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    if !bcuda::gpu::driver_present() {
        let (ok, err) = run(&["-q", "--gpu"]);
        assert!(!ok && err.contains("no usable GPU"), "{err}");
        assert!(!bcuda_index::with_ext(&fa, ".bwt").exists(), "--gpu without a GPU wrote files");
    }
    let (ok, err) = run(&["--cpu"]);
    assert!(ok, "{err}");
    assert!(err.contains("indexed in") && !err.contains("GPU"), "{err}");
    assert!(bcuda_index::with_ext(&fa, ".sa").exists());
}
