//! Where outputs go: FIFOs, descriptors and symlinks are written through as bwa's `fopen`
//! would; permissions are those of `fopen`; errors name the path given; signals leave no
//! temporary file; a closed pipe ends the command quietly; `-o` names pick SAM or BAM in
//! any case and formats bcuda does not write are refused. Only FIFOs, links and files in
//! temporary folders are written: never the machine's own /dev/null.

mod common;

use common::*;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// demo_ref.fa indexed by bwa, its first 200 reads, and bwa's .sai of them.
struct Demo {
    dir: tempfile::TempDir,
    prefix: String,
    reads: String,
    sai: String,
}

impl Demo {
    fn new() -> Demo {
        let dir = tempfile::tempdir().unwrap();
        let prefix = bwa_index(&testdata("demo_ref.fa"), dir.path()).to_str().unwrap().to_string();
        let reads = dir.path().join("reads.fq");
        head_fastq(&testdata("demo.fq"), 200, &reads);
        let reads = reads.to_str().unwrap().to_string();
        let sai = dir.path().join("bwa.sai");
        fs::write(&sai, bwa(&["aln", &prefix, &reads])).unwrap();
        Demo { dir, prefix, reads, sai: sai.to_str().unwrap().to_string() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn bwa_sai(&self) -> Vec<u8> {
        fs::read(&self.sai).unwrap()
    }

    /// `bcuda aln -f OUT` of the reads.
    fn aln_to(&self, out: &Path) -> Output {
        bcuda_output(&["aln", "--quiet", "-f", out.to_str().unwrap(), &self.prefix, &self.reads])
    }

    /// `bcuda samse OPTIONS` of bwa's .sai.
    fn samse(&self, options: &[&str]) -> Output {
        let mut args = vec!["samse", "--quiet"];
        args.extend(options);
        args.extend([self.prefix.as_str(), &self.sai, &self.reads]);
        bcuda_output(&args)
    }
}

fn bcuda_output(args: &[&str]) -> Output {
    common::bcuda_command().args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_ok(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
}

/// Names in `dir` (and its subfolders) of our temporary files.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            found.extend(temporaries(&entry.path()));
        } else if name.contains(".bcuda-") {
            found.push(name);
        }
    }
    found
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Reads a FIFO to its end on another thread.
fn drain(fifo: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        fs::File::open(fifo).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    })
}

/// What the reader got, once `fifo` is known to be a FIFO still (had it been replaced, the
/// reader would wait for a writer forever).
fn drained(fifo: &Path, reader: std::thread::JoinHandle<Vec<u8>>) -> Vec<u8> {
    assert!(fs::metadata(fifo).unwrap().file_type().is_fifo(), "{} was replaced", fifo.display());
    reader.join().unwrap()
}

fn without_pg(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam).lines().filter(|l| !l.starts_with("@PG")).map(str::to_string).collect()
}

#[test]
fn a_fifo_is_written_through() {
    let demo = Demo::new();
    let fifo = demo.path("out.fifo");
    mkfifo(&fifo);
    let reader = drain(&fifo);
    assert_ok(&demo.aln_to(&fifo));
    assert_eq!(drained(&fifo, reader), demo.bwa_sai());
    let reader = drain(&fifo);
    assert_ok(&demo.samse(&["-o", fifo.to_str().unwrap()]));
    let bwa_sam = bwa(&["samse", &demo.prefix, &demo.sai, &demo.reads]);
    assert_eq!(without_pg(&drained(&fifo, reader)), without_pg(&bwa_sam));
    let reader = drain(&fifo);
    assert_ok(&bcuda_output(&["merge-sai", &demo.sai, "-o", fifo.to_str().unwrap()]));
    assert_eq!(drained(&fifo, reader), demo.bwa_sai());
    let reader = drain(&fifo);
    assert_ok(&bcuda_output(&["split-reads", &demo.reads, fifo.to_str().unwrap()]));
    assert_eq!(drained(&fifo, reader), fs::read(&demo.reads).unwrap());
    assert!(temporaries(demo.dir.path()).is_empty());
}

#[test]
fn descriptors_are_written_through() {
    let demo = Demo::new();
    // Not /dev/stdout, the same link one step further: a bcuda that replaced the path would
    // replace the machine's own link; under /proc it cannot create a file.
    for name in ["/dev/fd/1", "/proc/self/fd/1"] {
        // Standard output a pipe: there is no file to put a temporary file beside.
        let out = demo.aln_to(Path::new(name));
        assert_ok(&out);
        assert_eq!(out.stdout, demo.bwa_sai(), "{name}");
        // A regular file: written as fopen would, through the descriptor.
        let file = demo.path("stdout.sai");
        fs::write(&file, b"old").unwrap();
        let status = common::bcuda_command()
            .args(["aln", "--quiet", "-f", name, &demo.prefix, &demo.reads])
            .stdout(fs::File::create(&file).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "{name}");
        assert_eq!(fs::read(&file).unwrap(), demo.bwa_sai(), "{name}");
    }
    assert!(temporaries(demo.dir.path()).is_empty());
}

#[test]
fn a_symlink_is_followed_and_kept() {
    let demo = Demo::new();
    fs::create_dir(demo.path("real")).unwrap();
    let link = demo.path("link.sai");
    std::os::unix::fs::symlink("real/target.sai", &link).unwrap();
    // Dangling, then pointing at a file: both times the target is written.
    for _ in 0..2 {
        assert_ok(&demo.aln_to(&link));
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(demo.path("real/target.sai")).unwrap(), demo.bwa_sai());
    }
    // A link to a FIFO leads to the FIFO.
    let fifo = demo.path("real/fifo");
    mkfifo(&fifo);
    let to_fifo = demo.path("to_fifo");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let reader = drain(&fifo);
    assert_ok(&demo.aln_to(&to_fifo));
    assert_eq!(drained(&fifo, reader), demo.bwa_sai());
    assert!(temporaries(demo.dir.path()).is_empty());
}

#[test]
fn permissions_are_those_of_fopen() {
    let demo = Demo::new();
    // An existing file keeps its mode.
    let kept = demo.path("kept.sai");
    fs::write(&kept, b"old").unwrap();
    fs::set_permissions(&kept, fs::Permissions::from_mode(0o600)).unwrap();
    assert_ok(&demo.aln_to(&kept));
    assert_eq!(fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(fs::read(&kept).unwrap(), demo.bwa_sai());
    // A new one: 0666 less the umask.
    let new = demo.path("new.sai");
    let script = format!(
        "umask 027; exec '{}' aln --quiet -f '{}' '{}' '{}'",
        env!("CARGO_BIN_EXE_bcuda"),
        new.display(),
        demo.prefix,
        demo.reads
    );
    assert!(Command::new("sh").args(["-c", &script]).status().unwrap().success());
    assert_eq!(fs::metadata(&new).unwrap().permissions().mode() & 0o777, 0o640);
    // A file we may not write is an error, as for fopen (root may write it, as with fopen).
    let read_only = demo.path("read_only.sai");
    fs::write(&read_only, b"old").unwrap();
    fs::set_permissions(&read_only, fs::Permissions::from_mode(0o444)).unwrap();
    let writable = fs::OpenOptions::new().write(true).open(&read_only).is_ok();
    let out = demo.aln_to(&read_only);
    if writable {
        assert_ok(&out);
        assert_eq!(fs::read(&read_only).unwrap(), demo.bwa_sai());
    } else {
        let err = stderr(&out);
        assert!(!out.status.success() && err.contains(&format!("{}: Permission denied", read_only.display())), "{err}");
        assert_eq!(fs::read(&read_only).unwrap(), b"old");
    }
    assert_eq!(fs::metadata(&read_only).unwrap().permissions().mode() & 0o777, 0o444);
    assert!(temporaries(demo.dir.path()).is_empty());
}

#[test]
fn errors_name_the_path_given() {
    let demo = Demo::new();
    fs::create_dir(demo.path("folder")).unwrap();
    let cases = [
        (format!("{}/", demo.path("new_folder").display()), "Is a directory"),
        (format!("{}/", demo.path("folder").display()), "Is a directory"),
        (demo.path("folder").display().to_string(), "Is a directory"),
        (demo.path("missing/out").display().to_string(), "No such file or directory"),
        (format!("{}/out", demo.sai), "Not a directory"),
    ];
    for (path, why) in &cases {
        let expected = format!("{path}: {why}");
        for out in [
            demo.aln_to(Path::new(path)),
            demo.samse(&["-o", path]),
            demo.samse(&["-f", path]),
            bcuda_output(&["merge-sai", &demo.sai, "-o", path]),
            bcuda_output(&["split-reads", &demo.reads, path]),
        ] {
            let err = stderr(&out);
            assert!(!out.status.success() && err.contains(&expected) && !err.contains(".bcuda-"), "{expected}: {err}");
        }
    }
    let prefix = demo.path("missing/ref").display().to_string();
    let out = bcuda_output(&["index", "-q", "--cpu", "-p", &prefix, &testdata("demo_ref.fa").to_string_lossy()]);
    let err = stderr(&out);
    assert!(
        !out.status.success() && err.contains(&format!("{prefix}.pac: No such file")) && !err.contains(".bcuda-"),
        "{err}"
    );
    assert!(!demo.path("new_folder").exists());
    assert!(temporaries(demo.dir.path()).is_empty());
}

/// Whether this process ignores `signal` (its children then do too).
fn ignored(signal: u32) -> bool {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).unwrap();
    u64::from_str_radix(mask.trim(), 16).unwrap() >> (signal - 1) & 1 == 1
}

/// `bcuda aln -f out.sai` of reads on standard input, once its temporary file exists; the
/// input stays open while the handle returned lives.
fn aln_waiting_on_stdin(demo: &Demo, out: &Path) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = common::bcuda_command()
        .args(["aln", "--quiet", "-f", out.to_str().unwrap(), &demo.prefix, "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(&fs::read(&demo.reads).unwrap()).unwrap();
    let start = Instant::now();
    while temporaries(demo.dir.path()).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no temporary file after 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, input)
}

/// The shell's `kill`, which every machine has.
fn kill(child: &std::process::Child, signal: &str) {
    let command = format!("kill -{signal} {}", child.id());
    assert!(Command::new("sh").args(["-c", &command]).status().unwrap().success());
}

#[test]
fn signals_remove_temporary_files() {
    use std::os::unix::process::ExitStatusExt;
    let demo = Demo::new();
    let out = demo.path("out.sai");
    for (signal, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        if ignored(number) {
            eprintln!("SIG{signal} is ignored here, and so by bcuda: not tested");
            continue;
        }
        let (mut child, _input) = aln_waiting_on_stdin(&demo, &out);
        kill(&child, signal);
        // The input still open: the run cannot end but by the signal.
        let status = child.wait().unwrap();
        assert_eq!((status.code(), status.signal()), (Some(128 + number as i32), None), "SIG{signal}");
        assert!(temporaries(demo.dir.path()).is_empty(), "SIG{signal} left {:?}", temporaries(demo.dir.path()));
        assert!(!out.exists());
    }
}

#[test]
fn a_temporary_file_left_by_sigkill_does_not_stop_a_later_run() {
    let demo = Demo::new();
    let out = demo.path("out.sai");
    let (mut child, _input) = aln_waiting_on_stdin(&demo, &out);
    kill(&child, "KILL");
    child.wait().unwrap();
    let stale = temporaries(demo.dir.path());
    assert_eq!(stale.len(), 1);
    assert_ok(&demo.aln_to(&out));
    assert_eq!(fs::read(&out).unwrap(), demo.bwa_sai());
    assert_eq!(temporaries(demo.dir.path()), stale);
}

/// Runs `bcuda args`, reads one line of its standard output and closes the pipe.
fn first_line_then_close(args: &[&str]) -> (Output, String) {
    let mut child = common::bcuda_command().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    (child.wait_with_output().unwrap(), line)
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let demo = Demo::new();
    let all_reads = testdata("demo.fq").to_str().unwrap().to_string();
    let sai = demo.path("all.sai");
    fs::write(&sai, bwa(&["aln", &demo.prefix, &all_reads])).unwrap();
    let (ends, pairs) = (
        ["demo_1.fq", "demo_2.fq"].map(|r| testdata(r).to_str().unwrap().to_string()),
        ["1.sai", "2.sai"].map(|s| demo.path(s)),
    );
    for (end, sai) in ends.iter().zip(&pairs) {
        fs::write(sai, bwa(&["aln", &demo.prefix, end])).unwrap();
    }
    let [sai1, sai2] = pairs.map(|p| p.to_str().unwrap().to_string());
    // Several hundred kB of SAM, more than a pipe holds.
    for args in [
        vec!["samse", "--quiet", &demo.prefix, sai.to_str().unwrap(), &all_reads],
        vec!["sampe", "--quiet", &demo.prefix, &sai1, &sai2, &ends[0], &ends[1]],
    ] {
        let (out, line) = first_line_then_close(&args);
        assert!(line.starts_with("@SQ"), "{line}");
        assert_eq!(out.status.code(), Some(141), "{}: {}", args[0], stderr(&out));
        assert_eq!(stderr(&out), "", "{}", args[0]);
    }
}

#[test]
fn bam_in_any_case_and_no_format_written_as_plain_sam() {
    let demo = Demo::new();
    for name in ["upper.BAM", "mixed.Bam"] {
        let bam = demo.path(name);
        assert_ok(&demo.samse(&["-o", bam.to_str().unwrap()]));
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(fs::File::open(&bam).unwrap()).read_to_end(&mut text).unwrap();
        assert!(text.starts_with(b"BAM\x01"), "{name} is not BAM");
    }
    for name in ["x.cram", "x.CRAM", "x.sam.gz", "x.bam.gz", "x.sam.bz2"] {
        let path = demo.path(name);
        let out = demo.samse(&["-o", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert!(
            !out.status.success() && err.contains(&format!("{}: ", path.display())) && err.contains("not supported"),
            "{name}: {err}"
        );
        assert!(!path.exists(), "{name} was written");
    }
    let path = demo.path("pairs.sam.GZ");
    let out = bcuda_output(&[
        "sampe",
        "--quiet",
        "-o",
        path.to_str().unwrap(),
        &demo.prefix,
        &demo.sai,
        &demo.sai,
        &demo.reads,
        &demo.reads,
    ]);
    assert!(!out.status.success() && stderr(&out).contains("not supported") && !path.exists(), "{}", stderr(&out));
    assert!(temporaries(demo.dir.path()).is_empty());
}
