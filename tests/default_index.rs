//! The user's short commands in a fresh shell: `bcuda index ref.fa && bcuda aln reads.fq >
//! reads.sai && bcuda samse reads.sai reads.fq` with a new HOME, giving the same files as the
//! explicit (bwa) forms; and the clear errors around the default index.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// `bcuda args...` run in `dir` with HOME set to `home`, no XDG_CONFIG_HOME and no
/// BCUDA_INDEX (as in a fresh shell of a new user), plus `env`.
fn bcuda_in(dir: &Path, home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bcuda"));
    cmd.current_dir(dir).env("HOME", home).env_remove("XDG_CONFIG_HOME").env_remove("BCUDA_INDEX").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn fails(out: Output) -> String {
    assert!(!out.status.success(), "succeeded: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "wrote {} bytes to stdout before failing", out.stdout.len());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A work folder with ref.fa and reads.fq, and a separate empty home.
/// A SAM output's lines but @PG (whose command line names how the index was given).
fn records(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect()
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(testdata("demo_ref.fa"), work.path().join("ref.fa")).unwrap();
    head_fastq(&testdata("demo.fq"), 300, &work.path().join("reads.fq"));
    (work, tempfile::tempdir().unwrap())
}

#[test]
fn short_forms_work_in_a_fresh_shell_and_match_the_explicit_forms() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    let index = ok(bcuda_in(w, h, &[], &["index", "ref.fa"]));
    let said = String::from_utf8_lossy(&index.stderr);
    assert!(said.contains("default index"), "{said}");
    assert!(h.join(".config/bcuda/default-index").exists());

    let aln = ok(bcuda_in(w, h, &[], &["aln", "reads.fq"]));
    let said = String::from_utf8_lossy(&aln.stderr);
    assert!(said.contains("[bcuda aln] index") && said.contains("ref.fa"), "aln does not say which index: {said}");
    std::fs::write(w.join("reads.sai"), &aln.stdout).unwrap();
    let samse = ok(bcuda_in(w, h, &[], &["samse", "reads.sai", "reads.fq"]));
    assert!(String::from_utf8_lossy(&samse.stderr).contains("[bcuda samse] index"));

    // The explicit forms, from another folder: same .sai, same SAM records, nothing said
    // about the index.
    let elsewhere = tempfile::tempdir().unwrap();
    let (r, q, s) = (w.join("ref.fa"), w.join("reads.fq"), w.join("reads.sai"));
    let aln2 = ok(bcuda_in(elsewhere.path(), h, &[], &["aln", r.to_str().unwrap(), q.to_str().unwrap()]));
    assert_eq!(aln.stdout, aln2.stdout);
    assert!(!String::from_utf8_lossy(&aln2.stderr).contains("[bcuda aln] index"));
    let samse2 = ok(bcuda_in(
        elsewhere.path(),
        h,
        &[],
        &["samse", r.to_str().unwrap(), s.to_str().unwrap(), q.to_str().unwrap()],
    ));
    assert_eq!(records(&samse), records(&samse2));
    assert_eq!(records(&samse).len(), 2 + 300, "two @SQ lines and 300 reads");
}

#[test]
fn xdg_config_home_and_bcuda_index() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    let xdg = h.join("xdg");
    ok(bcuda_in(w, h, &[("XDG_CONFIG_HOME", &xdg)], &["index", "-q", "ref.fa"]));
    assert!(xdg.join("bcuda/default-index").exists());
    // Without XDG_CONFIG_HOME that default is not seen: a clear error naming the ways out.
    let err = fails(bcuda_in(w, h, &[], &["aln", "reads.fq"]));
    assert!(
        err.contains("no default index") && err.contains("bcuda index ref.fa") && err.contains("BCUDA_INDEX"),
        "{err}"
    );
    let aln = ok(bcuda_in(w, h, &[("XDG_CONFIG_HOME", &xdg)], &["aln", "--quiet", "reads.fq"]));
    assert!(aln.stderr.is_empty(), "--quiet still talks: {}", String::from_utf8_lossy(&aln.stderr));
    // BCUDA_INDEX alone.
    let aln2 = ok(bcuda_in(w, h, &[("BCUDA_INDEX", &w.join("ref.fa"))], &["aln", "reads.fq"]));
    assert!(String::from_utf8_lossy(&aln2.stderr).contains("BCUDA_INDEX"));
    assert_eq!(aln.stdout, aln2.stdout);
}

#[test]
fn stale_default_is_a_clear_error() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    ok(bcuda_in(w, h, &[], &["index", "-q", "ref.fa"]));
    ok(bcuda_in(w, h, &[], &["aln", "-f", "reads.sai", "reads.fq"]));
    for ext in ["bwt", "sa", "pac", "ann", "amb"] {
        std::fs::remove_file(w.join(format!("ref.fa.{ext}"))).unwrap();
    }
    let err = fails(bcuda_in(w, h, &[], &["aln", "reads.fq"]));
    assert!(err.contains("ref.fa.bwt is missing") && err.contains("default-index"), "{err}");
    let err = fails(bcuda_in(w, h, &[], &["samse", "reads.sai", "reads.fq"]));
    assert!(err.contains("ref.fa.bwt is missing"), "{err}");
    let err = fails(bcuda_in(w, h, &[], &["autotune", "--reads", "reads.fq"]));
    assert!(err.contains("ref.fa.bwt is missing"), "{err}");
}

#[test]
fn an_index_is_never_taken_for_reads() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    ok(bcuda_in(w, h, &[], &["index", "-q", "ref.fa"]));
    // The reads forgotten: ref.fa is an index, not reads to align against the default.
    let err = fails(bcuda_in(w, h, &[], &["aln", "ref.fa"]));
    assert!(err.contains("ref.fa is an index"), "{err}");
    // Reads that have index files beside them are reads when named after an index.
    std::fs::copy(w.join("reads.fq"), w.join("reads2.fq")).unwrap();
    std::fs::write(w.join("reads2.fq.bwt"), b"").unwrap();
    let a = ok(bcuda_in(w, h, &[], &["aln", "ref.fa", "reads.fq"]));
    let b = ok(bcuda_in(w, h, &[], &["aln", "ref.fa", "reads2.fq"]));
    assert_eq!(a.stdout, b.stdout);
    // ... and ambiguous alone: an error that says how to proceed.
    let err = fails(bcuda_in(w, h, &[], &["aln", "reads2.fq"]));
    assert!(err.contains("name the index too"), "{err}");
    // Swapped arguments.
    let err = fails(bcuda_in(w, h, &[], &["aln", "reads.fq", "ref.fa"]));
    assert!(err.contains("the index comes first"), "{err}");
}

/// The @PG line of a SAM.
fn pg_line(out: &Output) -> String {
    let sam = String::from_utf8_lossy(&out.stdout);
    let pg: Vec<&str> = sam.lines().filter(|l| l.starts_with("@PG")).collect();
    assert_eq!(pg.len(), 1, "{sam}");
    pg[0].to_string()
}

#[test]
fn pg_names_the_index_even_the_default_one() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    ok(bcuda_in(w, h, &[], &["index", "-q", "ref.fa"]));
    ok(bcuda_in(w, h, &[], &["aln", "--quiet", "-f", "reads.sai", "reads.fq"]));
    let prefix = std::fs::canonicalize(w.join("ref.fa")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    // Named: the command line as given (bwa's CL).
    let named = ok(bcuda_in(w, h, &[], &["samse", "--quiet", "ref.fa", "reads.sai", "reads.fq"]));
    let bin = env!("CARGO_BIN_EXE_bcuda");
    assert_eq!(
        pg_line(&named),
        format!("@PG\tID:bcuda\tPN:bcuda\tVN:{version}\tCL:{bin} samse --quiet ref.fa reads.sai reads.fq")
    );
    // The default: the absolute prefix where the index argument goes.
    let default = ok(bcuda_in(w, h, &[], &["samse", "--quiet", "reads.sai", "reads.fq"]));
    assert_eq!(
        pg_line(&default),
        format!(
            "@PG\tID:bcuda\tPN:bcuda\tVN:{version}\tCL:{bin} samse {} --quiet reads.sai reads.fq",
            prefix.display()
        )
    );
    assert_eq!(records(&named), records(&default));
    // sampe too, with the default from BCUDA_INDEX given relative.
    let env = [("BCUDA_INDEX", Path::new("ref.fa"))];
    let sampe = ok(bcuda_in(w, h, &env, &["sampe", "--quiet", "reads.sai", "reads.sai", "reads.fq", "reads.fq"]));
    assert!(
        pg_line(&sampe)
            .ends_with(&format!("CL:{bin} sampe {} --quiet reads.sai reads.sai reads.fq reads.fq", prefix.display())),
        "{}",
        pg_line(&sampe)
    );
}

#[test]
fn index_not_default_leaves_the_default_alone() {
    let (work, home) = setup();
    let (w, h) = (work.path(), home.path());
    ok(bcuda_in(w, h, &[], &["index", "-q", "--not-default", "ref.fa"]));
    assert!(!h.join(".config/bcuda/default-index").exists());
    assert!(w.join("ref.fa.bwt").exists());
}
