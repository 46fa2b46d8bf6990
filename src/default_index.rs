//! The default index: `bcuda index ref.fa` records the prefix it built in
//! `$XDG_CONFIG_HOME/bcuda/default-index` (or `~/.config/bcuda/default-index`), and commands
//! whose index argument is left out use it; `BCUDA_INDEX` overrides the file.
//!
//! Commands take their positional arguments as `[INDEX] INPUTS...` (bwa's order, the index
//! first). Which form was meant is decided by the number of arguments, and checked against
//! the index files present, so that an index is never read as reads (or the reverse):
//! - `INDEX INPUTS...` (one more than the inputs): the first argument must be an index.
//! - `INPUTS...` alone: the default index is used, and the first argument must *not* be an
//!   index (`bcuda aln ref.fa` with the reads forgotten would otherwise align the FASTA).
//!
//! Every command calls [`split_positional`] (or [`named_or_default`] for `--index`), then
//! [`IndexChoice::announce`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The files of a BWA index, `PREFIX` + each of these.
pub const INDEX_EXTENSIONS: [&str; 5] = [".bwt", ".sa", ".pac", ".ann", ".amb"];

/// Environment variable naming the default index; it wins over the file `bcuda index` writes.
pub const ENV_VAR: &str = "BCUDA_INDEX";

/// Where the index a command uses came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Named on the command line.
    Argument,
    /// `BCUDA_INDEX`.
    Environment,
    /// The file `bcuda index` writes.
    ConfigFile(PathBuf),
}

/// The index prefix a command uses, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexChoice {
    pub prefix: PathBuf,
    pub origin: Origin,
}

impl IndexChoice {
    /// Says on stderr which index is used when it was not named on the command line (unless
    /// `quiet`): `[bcuda aln] index /data/ref.fa (the default, from ~/.config/bcuda/default-index)`.
    pub fn announce(&self, command: &str, quiet: bool) {
        if quiet || self.origin == Origin::Argument {
            return;
        }
        eprintln!("[bcuda {command}] index {} ({})", self.prefix.display(), self.origin_text());
    }

    fn origin_text(&self) -> String {
        match &self.origin {
            Origin::Argument => "named on the command line".into(),
            Origin::Environment => format!("from {ENV_VAR}"),
            Origin::ConfigFile(file) => format!("the default, from {}", file.display()),
        }
    }
}

/// True when any of `PREFIX.bwt .sa .pac .ann .amb` exists: then `prefix` is an index
/// (possibly incomplete: the loader names a missing file), never reads.
pub fn is_index(prefix: &Path) -> bool {
    INDEX_EXTENSIONS.iter().any(|ext| bcuda_index::with_ext(prefix, ext).exists())
}

/// Splits a command's positional arguments `[INDEX] INPUTS...` into the index and the inputs.
///
/// `inputs` are example names of the inputs that follow the index, used in messages and
/// giving their count: `["reads.fq"]` for `aln`, `["reads.sai", "reads.fq"]` for `samse`,
/// `["a.sai", "b.sai", "a.fq", "b.fq"]` for `sampe`. With `inputs.len() + 1` arguments the
/// first is the index (an error if it has no index files); with `inputs.len()` the default
/// index is used (an error if the first argument has index files, if there is no default, or
/// if the default's files are gone). Returns the index and exactly `inputs.len()` paths.
pub fn split_positional(command: &str, args: &[PathBuf], inputs: &[&str]) -> Result<(IndexChoice, Vec<PathBuf>)> {
    split_with(&Lookup::from_env(), command, args, inputs)
}

/// The index given by an option such as `autotune --index`, or else the default index.
pub fn named_or_default(command: &str, named: Option<&Path>) -> Result<IndexChoice> {
    match named {
        Some(prefix) if !is_index(prefix) => Err(not_an_index(prefix)),
        Some(prefix) => Ok(IndexChoice { prefix: prefix.to_path_buf(), origin: Origin::Argument }),
        None => Lookup::from_env().default_index(command, "--index ref.fa"),
    }
}

/// Records `prefix` (made absolute) as the default index; returns the file written.
pub fn record_default(prefix: &Path) -> Result<PathBuf> {
    let file = config_file().context("no config folder: set HOME or XDG_CONFIG_HOME")?;
    let prefix = std::path::absolute(prefix).with_context(|| format!("{}", prefix.display()))?;
    write_default(&file, &prefix)?;
    Ok(file)
}

/// `$XDG_CONFIG_HOME/bcuda/default-index`, else `$HOME/.config/bcuda/default-index`.
pub fn config_file() -> Option<PathBuf> {
    let non_empty = |v: OsString| (!v.is_empty()).then(|| PathBuf::from(v));
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .and_then(non_empty)
        .or_else(|| std::env::var_os("HOME").and_then(non_empty).map(|h| h.join(".config")))?;
    Some(base.join("bcuda").join("default-index"))
}

/// What the default index is looked up from: `BCUDA_INDEX` and the config file (a value, so
/// that tests need not change the process environment).
struct Lookup {
    env: Option<PathBuf>,
    config_file: Option<PathBuf>,
}

impl Lookup {
    fn from_env() -> Lookup {
        Lookup {
            env: std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()).map(PathBuf::from),
            config_file: config_file(),
        }
    }

    /// `BCUDA_INDEX`, else the config file; its files must exist. `explicit` shows how the
    /// command names an index, for the message when there is no default.
    fn default_index(&self, command: &str, explicit: &str) -> Result<IndexChoice> {
        let choice = if let Some(prefix) = &self.env {
            IndexChoice { prefix: prefix.clone(), origin: Origin::Environment }
        } else if let Some(prefix) = self.config_file.as_deref().map(read_default).transpose()?.flatten() {
            IndexChoice { prefix, origin: Origin::ConfigFile(self.config_file.clone().expect("read from it")) }
        } else {
            bail!(
                "no index given and no default index. Name it (bcuda {command} {explicit}), \
                 or build one with `bcuda index ref.fa` (the last index built is the default), or set {ENV_VAR}=ref.fa"
            );
        };
        if !is_index(&choice.prefix) {
            bail!(
                "the index {} ({}) is gone: {} is missing. Build it again with `bcuda index`, or set {ENV_VAR}",
                choice.prefix.display(),
                choice.origin_text(),
                bcuda_index::with_ext(&choice.prefix, ".bwt").display()
            );
        }
        Ok(choice)
    }
}

fn split_with(
    lookup: &Lookup,
    command: &str,
    args: &[PathBuf],
    inputs: &[&str],
) -> Result<(IndexChoice, Vec<PathBuf>)> {
    let usage = format!("bcuda {command} [ref.fa] {}", inputs.join(" "));
    if args.len() == inputs.len() + 1 {
        let prefix = &args[0];
        if !is_index(prefix) {
            if let Some(index) = args[1..].iter().find(|a| is_index(a)) {
                bail!(
                    "{} is not an index but {} is: the index comes first ({usage})",
                    prefix.display(),
                    index.display()
                );
            }
            return Err(not_an_index(prefix));
        }
        return Ok((IndexChoice { prefix: prefix.clone(), origin: Origin::Argument }, args[1..].to_vec()));
    }
    if args.len() != inputs.len() {
        bail!("expected {} or {} arguments ({usage}), got {}", inputs.len(), inputs.len() + 1, args.len());
    }
    if let Some(first) = args.first().filter(|a| is_index(a)) {
        bail!(
            "{} is an index, and the {} after it {} missing ({usage}); to use {} as {} with the default index, name the index too",
            first.display(),
            inputs.join(" "),
            if inputs.len() == 1 { "is" } else { "are" },
            first.display(),
            inputs[0]
        );
    }
    let choice = lookup.default_index(command, &format!("ref.fa {}", inputs.join(" ")))?;
    Ok((choice, args.to_vec()))
}

fn not_an_index(prefix: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{} is not an index: {} is missing (build it with `bcuda index {}` or `bwa index`)",
        prefix.display(),
        bcuda_index::with_ext(prefix, ".bwt").display(),
        prefix.display()
    )
}

/// The prefix recorded in `file`; `None` when the file does not exist.
fn read_default(file: &Path) -> Result<Option<PathBuf>> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading the default index from {}", file.display())),
    };
    let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    if line.is_empty() || line.contains(&b'\n') {
        bail!(
            "{}: expected one line naming the default index; run `bcuda index` again or remove the file",
            file.display()
        );
    }
    Ok(Some(path_from_bytes(line)))
}

/// Writes the prefix as one line, replacing the old file whole.
fn write_default(file: &Path, prefix: &Path) -> Result<()> {
    let dir = file.parent().expect("the config file is in a folder");
    std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    let mut line = path_bytes(prefix);
    line.push(b'\n');
    let mut out = bcuda_output::Output::file(file)?;
    std::io::Write::write_all(&mut out, &line)?;
    Ok(out.commit()?)
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder with an index `ref.fa` (empty files stand for the five), reads `r.fq`, and
    /// the config file path `cfg/bcuda/default-index`.
    struct Setup {
        dir: tempfile::TempDir,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().unwrap();
            for ext in INDEX_EXTENSIONS {
                std::fs::write(dir.path().join(format!("ref.fa{ext}")), b"").unwrap();
            }
            std::fs::write(dir.path().join("r.fq"), b"@r\nACGT\n+\nIIII\n").unwrap();
            Setup { dir }
        }
        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }
        fn config(&self) -> PathBuf {
            self.path("cfg/bcuda/default-index")
        }
        fn lookup(&self, env: Option<&str>) -> Lookup {
            Lookup { env: env.map(|e| self.path(e)), config_file: Some(self.config()) }
        }
    }

    fn err(r: Result<(IndexChoice, Vec<PathBuf>)>) -> String {
        format!("{:#}", r.expect_err("expected an error"))
    }

    #[test]
    fn explicit_index_is_used_as_given() {
        let s = Setup::new();
        let (choice, rest) =
            split_with(&s.lookup(None), "aln", &[s.path("ref.fa"), s.path("r.fq")], &["reads.fq"]).unwrap();
        assert_eq!(choice, IndexChoice { prefix: s.path("ref.fa"), origin: Origin::Argument });
        assert_eq!(rest, [s.path("r.fq")]);
    }

    #[test]
    fn default_from_the_config_file() {
        let s = Setup::new();
        write_default(&s.config(), &s.path("ref.fa")).unwrap();
        let (choice, rest) =
            split_with(&s.lookup(None), "samse", &[s.path("r.sai"), s.path("r.fq")], &["reads.sai", "reads.fq"])
                .unwrap();
        assert_eq!(choice, IndexChoice { prefix: s.path("ref.fa"), origin: Origin::ConfigFile(s.config()) });
        assert_eq!(rest, [s.path("r.sai"), s.path("r.fq")]);
    }

    #[test]
    fn environment_wins_over_the_config_file() {
        let s = Setup::new();
        write_default(&s.config(), &s.path("gone.fa")).unwrap();
        let (choice, _) = split_with(&s.lookup(Some("ref.fa")), "aln", &[s.path("r.fq")], &["reads.fq"]).unwrap();
        assert_eq!(choice.origin, Origin::Environment);
        assert_eq!(choice.prefix, s.path("ref.fa"));
    }

    #[test]
    fn no_default_says_how_to_set_one() {
        let s = Setup::new();
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("r.fq")], &["reads.fq"]));
        assert!(e.contains("no default index") && e.contains("bcuda index ref.fa") && e.contains(ENV_VAR), "{e}");
    }

    #[test]
    fn stale_default_names_the_missing_file() {
        let s = Setup::new();
        write_default(&s.config(), &s.path("gone.fa")).unwrap();
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("r.fq")], &["reads.fq"]));
        assert!(e.contains("gone.fa.bwt is missing") && e.contains("default-index"), "{e}");
        let e = err(split_with(&s.lookup(Some("gone2.fa")), "aln", &[s.path("r.fq")], &["reads.fq"]));
        assert!(e.contains("gone2.fa.bwt is missing") && e.contains(ENV_VAR), "{e}");
    }

    #[test]
    fn an_index_alone_is_not_taken_for_reads() {
        let s = Setup::new();
        write_default(&s.config(), &s.path("ref.fa")).unwrap();
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("ref.fa")], &["reads.fq"]));
        assert!(e.contains("is an index") && e.contains("reads.fq after it is missing"), "{e}");
    }

    #[test]
    fn reads_with_index_files_beside_them() {
        // r.fq has been indexed too: named after an index it is reads; alone it is ambiguous.
        let s = Setup::new();
        std::fs::write(s.path("r.fq.bwt"), b"").unwrap();
        let (choice, rest) =
            split_with(&s.lookup(None), "aln", &[s.path("ref.fa"), s.path("r.fq")], &["reads.fq"]).unwrap();
        assert_eq!((choice.prefix, rest), (s.path("ref.fa"), vec![s.path("r.fq")]));
        write_default(&s.config(), &s.path("ref.fa")).unwrap();
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("r.fq")], &["reads.fq"]));
        assert!(e.contains("name the index too"), "{e}");
    }

    #[test]
    fn first_argument_that_is_not_an_index() {
        let s = Setup::new();
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("nothere.fa"), s.path("r.fq")], &["reads.fq"]));
        assert!(e.contains("nothere.fa.bwt is missing"), "{e}");
        let e = err(split_with(&s.lookup(None), "aln", &[s.path("r.fq"), s.path("ref.fa")], &["reads.fq"]));
        assert!(e.contains("the index comes first"), "{e}");
    }

    #[test]
    fn wrong_number_of_arguments() {
        let s = Setup::new();
        let e = err(split_with(&s.lookup(None), "samse", &[s.path("r.fq")], &["reads.sai", "reads.fq"]));
        assert!(e.contains("expected 2 or 3 arguments"), "{e}");
    }

    #[test]
    fn default_file_round_trips_and_rejects_garbage() {
        let s = Setup::new();
        write_default(&s.config(), Path::new("/x y/ref.fa")).unwrap();
        assert_eq!(read_default(&s.config()).unwrap(), Some(PathBuf::from("/x y/ref.fa")));
        std::fs::write(s.config(), b"").unwrap();
        assert!(format!("{:#}", read_default(&s.config()).unwrap_err()).contains("one line"));
        assert_eq!(read_default(&s.path("none")).unwrap(), None);
    }
}
