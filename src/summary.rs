//! The one line each command ends with on stderr, terminal or not, so that a workflow's log
//! says what ran, against which index, on how much and how fast:
//! `[bcuda aln] bcuda 0.1.0, index /data/ref.fa: 20000 reads in 1.23 s (16260 reads/s)`.
//! Left out with `--quiet` (`index -q`).

use std::path::Path;
use std::time::Instant;

/// A command's clock, started when it starts.
pub struct Summary {
    command: &'static str,
    started: Instant,
}

impl Summary {
    pub fn start(command: &'static str) -> Summary {
        Summary { command, started: Instant::now() }
    }

    /// Prints the line (unless `quiet`): `count` `unit`s done, against `index` if any.
    pub fn print(&self, index: Option<&Path>, count: u64, unit: &str, quiet: bool) {
        if !quiet {
            crate::progress::note(&self.line(index, count, unit, self.started.elapsed().as_secs_f64()));
        }
    }

    fn line(&self, index: Option<&Path>, count: u64, unit: &str, secs: f64) -> String {
        let index = index.map(|p| format!(", index {}", p.display())).unwrap_or_default();
        let rate = count as f64 / secs.max(1e-9);
        format!(
            "[bcuda {}] bcuda {}{index}: {count} {unit} in {secs:.2} s ({rate:.0} {unit}/s)",
            self.command,
            env!("CARGO_PKG_VERSION")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_version_index_count_time_and_rate() {
        let s = Summary::start("samse");
        let line = s.line(Some(Path::new("ref.fa")), 1000, "reads", 2.0);
        assert_eq!(
            line,
            format!(
                "[bcuda samse] bcuda {}, index ref.fa: 1000 reads in 2.00 s (500 reads/s)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(!s.line(None, 3, "reads", 1.0).contains("index"));
    }
}
