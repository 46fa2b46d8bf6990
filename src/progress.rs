//! Progress on stderr for long work: items/s and percent, at most a few times a second.
//! Silent with `-q` or when stderr is not a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    what: &'static str,
    enabled: bool,
    total: Option<u64>,
    done: u64,
    start: Instant,
    last: Instant,
}

impl Progress {
    /// `total` is the amount of work when known (bytes or items), for a percentage.
    pub fn new(what: &'static str, total: Option<u64>, quiet: bool) -> Progress {
        let now = Instant::now();
        Progress { what, enabled: !quiet && std::io::stderr().is_terminal(), total, done: 0, start: now, last: now }
    }

    /// Adds `n` finished items; `position` is the amount of `total` covered so far, if known.
    pub fn advance(&mut self, n: u64, position: Option<u64>) {
        self.done += n;
        if !self.enabled || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        self.last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = self.done as f64 / secs;
        let pct = match (self.total, position) {
            (Some(t), Some(p)) if t > 0 => format!(" {:5.1}%", 100.0 * p as f64 / t as f64),
            _ => String::new(),
        };
        if self.done == 0 {
            // Work measured only by position (e.g. index construction): the percentage alone.
            eprint!("\r[bcuda] {}:{}   ", self.what, pct);
        } else {
            eprint!("\r[bcuda] {} {}: {:.0}/s{}   ", self.done, self.what, rate, pct);
        }
        let _ = std::io::stderr().flush();
    }

    /// Final line (only when enabled).
    pub fn finish(&mut self) {
        if self.enabled && self.done > 0 {
            let secs = self.start.elapsed().as_secs_f64().max(1e-9);
            eprintln!("\r[bcuda] {} {} in {:.1} s ({:.0}/s)        ", self.done, self.what, secs, self.done as f64 / secs);
        }
    }
}
