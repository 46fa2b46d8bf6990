//! Helpers shared by the integration tests: the repo's data, `bwa`, our binary, and a seeded
//! read simulator for lengths and errors that the Debian data does not cover.
#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file of data/ (from scripts/get-data.sh); panics with instructions when it is missing.
pub fn data(name: &str) -> PathBuf {
    let p = repo().join("data").join(name);
    assert!(p.exists(), "{} is missing: run scripts/get-data.sh first", p.display());
    p
}

pub fn testdata(name: &str) -> PathBuf {
    repo().join("testdata").join(name)
}

/// Runs a command, returns stdout; panics with its stderr when it fails.
pub fn run(cmd: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd} ({e}); CI installs it with apt-get"));
    assert!(out.status.success(), "{cmd} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// `subcommand options... positional...` as one argument list.
pub fn command_line<'a>(subcommand: &'a str, options: &[&'a str], positional: &[&'a str]) -> Vec<&'a str> {
    [subcommand].iter().chain(options).chain(positional).copied().collect()
}

/// The same command line for bcuda, with progress off.
pub fn quiet(mut args: Vec<&str>) -> Vec<&str> {
    args.insert(1, "--quiet");
    args
}

pub fn bwa(args: &[&str]) -> Vec<u8> {
    run("bwa", args)
}

/// Where the tests' bcuda keeps its config (the default index `bcuda index` records): a folder
/// of this test process's, so that no test writes the user's `~/.config`.
pub fn test_config_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("bcuda-test-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// `bcuda` as the tests run it: its config in [`test_config_dir`].
pub fn bcuda_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bcuda"));
    cmd.env("XDG_CONFIG_HOME", test_config_dir());
    cmd
}

pub fn bcuda(args: &[&str]) -> Vec<u8> {
    let out = bcuda_command().args(args).output().unwrap();
    assert!(out.status.success(), "bcuda {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}
/// `bcuda args` with `stdin` piped in, and config files kept in `config` when given (else in
/// [`test_config_dir`]): (success, stdout, stderr).
pub fn bcuda_with_stdin(args: &[&str], stdin: &[u8], config: Option<&Path>) -> (bool, Vec<u8>, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = bcuda_command();
    if let Some(dir) = config {
        cmd.env("XDG_CONFIG_HOME", dir);
    }
    let mut child = cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    // Written from another thread: bcuda may stop reading early (an error) or write a lot first.
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The development binary `bcuda-dev` (dev/: synth-genome, stack-profile, gpu-bench), built
/// on first use. Cargo builds only the tested package's binaries for its integration tests
/// (and `CARGO_BIN_EXE_*` names only those), so it is built here with the profile and target
/// directory of this test's `bcuda`, and found beside it.
pub fn bcuda_dev_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let profile_dir = Path::new(env!("CARGO_BIN_EXE_bcuda")).parent().unwrap();
        let profile = profile_dir.file_name().unwrap().to_str().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", "bcuda-dev", "--bin", "bcuda-dev", "--manifest-path"]);
        build.arg(repo().join("Cargo.toml")).arg("--target-dir").arg(profile_dir.parent().unwrap());
        // Cargo's `dev` profile builds into debug/, any other into a directory of its name.
        if profile != "debug" {
            build.args(["--profile", profile]);
        }
        let status = build.status().expect("cannot run cargo to build bcuda-dev");
        assert!(status.success(), "building bcuda-dev failed ({status})");
        profile_dir.join(format!("bcuda-dev{}", std::env::consts::EXE_SUFFIX))
    })
    .clone()
}

/// Runs `bcuda-dev`, returns stdout; panics with its stderr when it fails.
pub fn bcuda_dev(args: &[&str]) -> Vec<u8> {
    run(bcuda_dev_path().to_str().unwrap(), args)
}

/// `bcuda` expected to fail: returns its stderr.
pub fn bcuda_fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bcuda")).args(args).output().unwrap();
    assert!(!out.status.success(), "bcuda {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// E. coli copied into `dir` and indexed by bcuda (the tests' default index left as it is):
/// its FASTA's path, the index prefix.
pub fn ecoli_index(dir: &tempfile::TempDir) -> String {
    let fasta = dir.path().join("ecoli536.fa");
    std::fs::copy(data("ecoli536.fa"), &fasta).unwrap();
    let fasta = fasta.to_str().unwrap().to_string();
    bcuda(&["index", "-q", "--not-default", &fasta]);
    fasta
}

/// Copies `fasta` into `dir` and indexes it with bwa; returns the prefix.
pub fn bwa_index(fasta: &Path, dir: &Path) -> PathBuf {
    let dst = dir.join(fasta.file_name().unwrap());
    std::fs::copy(fasta, &dst).unwrap();
    bwa(&["index", dst.to_str().unwrap()]);
    dst
}

/// The first `n` records of a 4-line FASTQ.
pub fn head_fastq(src: &Path, n: usize, dst: &Path) {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<&str> = text.lines().take(4 * n).collect();
    std::fs::write(dst, lines.join("\n") + "\n").unwrap();
}

/// Seeded simulator: reads of `len` bp from both strands of `fasta`'s first sequence, with
/// mismatches, short insertions and deletions, N bases, and some random (unmappable) reads.
pub fn simulate_reads(fasta: &Path, len: usize, n: usize, seed: u64, dst: &Path) {
    let text = std::fs::read_to_string(fasta).unwrap();
    let genome: Vec<u8> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('>'))
        .flat_map(|l| l.trim().bytes())
        .map(|b| b.to_ascii_uppercase())
        .collect();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    let bases = b"ACGT";
    let mut out = String::new();
    for r in 0..n {
        let start = next((genome.len() - len - 10) as u64) as usize;
        let mut read: Vec<u8> = genome[start..start + len + 10].to_vec();
        match next(10) {
            0..=3 => {}
            4 | 5 => {
                for _ in 0..=next(3) {
                    let p = next(len as u64) as usize;
                    read[p] = bases[next(4) as usize];
                }
            }
            6 => {
                let p = 10 + next(len as u64 - 20) as usize;
                let n_del = 1 + next(3) as usize;
                read.drain(p..p + n_del);
            }
            7 => {
                let p = 10 + next(len as u64 - 20) as usize;
                for _ in 0..1 + next(3) {
                    read.insert(p, bases[next(4) as usize]);
                }
            }
            8 => {
                let p = next(len as u64) as usize;
                read[p] = b'N';
                if next(2) == 0 {
                    read[(p + 7) % len] = b'N';
                }
            }
            _ => read = (0..len + 10).map(|_| bases[next(4) as usize]).collect(),
        }
        read.truncate(len);
        if next(2) == 0 {
            read = read
                .iter()
                .rev()
                .map(|&b| match b {
                    b'A' => b'T',
                    b'C' => b'G',
                    b'G' => b'C',
                    b'T' => b'A',
                    x => x,
                })
                .collect();
        }
        let qual: String =
            (0..len).map(|i| (33 + if i > len - 10 { 2 + next(20) } else { 20 + next(21) }) as u8 as char).collect();
        out.push_str(&format!("@sim{r}/1\n{}\n+\n{qual}\n", String::from_utf8(read).unwrap()));
    }
    std::fs::write(dst, out).unwrap();
}

/// A temporary folder holding a data/ genome indexed by bwa and the first `n` of a data/ read set.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub prefix: PathBuf,
    pub reads: PathBuf,
}

pub fn fixture(genome: &str, reads: &str, n: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&data(genome), dir.path());
    let subset = dir.path().join("reads.fq");
    head_fastq(&data(reads), n, &subset);
    Fixture { dir, prefix, reads: subset }
}

/// A temporary folder holding a data/ genome indexed by bwa and the first `n` pairs of a
/// data/ paired set (`{name}_1.fq`, `{name}_2.fq`).
pub struct PairFixture {
    pub dir: tempfile::TempDir,
    pub prefix: PathBuf,
    pub reads: [PathBuf; 2],
}

pub fn pair_fixture(genome: &str, name: &str, n: usize) -> PairFixture {
    let dir = tempfile::tempdir().unwrap();
    let prefix = bwa_index(&data(genome), dir.path());
    let reads = [1, 2].map(|e| {
        let subset = dir.path().join(format!("{name}_{e}.fq"));
        head_fastq(&data(&format!("{name}_{e}.fq")), n, &subset);
        subset
    });
    PairFixture { dir, prefix, reads }
}
