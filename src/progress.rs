//! Progress on stderr for long work, drawn by `indicatif`: a bar with rate, percent and ETA
//! (once a rate is known) when the amount of work is known, a spinner with the rate when it
//! is not (standard input). Silent with `--quiet` or when stderr is not a terminal; the
//! command's summary line (`crate::summary`) is printed either way.
//!
//! Every bar joins one process-wide `MultiProgress`, so several at once (one per GPU) each
//! get a line; [`note`] prints a line above them without tearing them.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressState, ProgressStyle};

/// The bars of this process, drawn together on stderr.
fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(REFRESH_HZ)))
}

/// Prints `line` on stderr above any progress bars (plainly when there are none).
pub fn note(line: &str) {
    bars().suspend(|| eprintln!("{line}"));
}

/// One line of progress. Cloning gives another handle on the same line.
#[derive(Clone)]
pub struct Progress {
    what: String,
    bar: ProgressBar,
    /// Amount of work (bytes of input, or units of a fraction) when known.
    total: Option<u64>,
    /// Items finished (the bar's position follows the input instead when none are counted).
    items: Arc<AtomicU64>,
    /// The input position of the last batch finished, where the next one starts.
    last_position: Arc<AtomicU64>,
}

/// Items between two moves of the bar within a batch.
const TICK_EVERY: u64 = 4096;

/// The items of one batch, counted by the workers that finish them (see [`Progress::batch`]).
pub struct BatchTicker<'a> {
    progress: &'a Progress,
    done: AtomicU64,
    len: u64,
    /// The batch's span of the input, over which the position is spread evenly.
    start: u64,
    end: u64,
}

impl BatchTicker<'_> {
    /// One more item of the batch done; the bar moves every [`TICK_EVERY`] items.
    pub fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(TICK_EVERY) && done < self.len {
            let at = self.start + ((self.end - self.start) as f64 * done as f64 / self.len as f64) as u64;
            self.progress.show(self.progress.items() + done, Some(at));
        }
    }
}

/// Redraws per second, at most.
const REFRESH_HZ: u8 = 8;

impl Progress {
    /// `what` labels the line ("reads aligned"); `total` is the amount of work when known,
    /// in the unit of the `position` given to [`advance`](Self::advance) (bytes of input,
    /// or e.g. 1000 for permille).
    pub fn new(what: impl Into<String>, total: Option<u64>, quiet: bool) -> Progress {
        let what = what.into();
        let total = total.filter(|&t| t > 0);
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            // Dropped unfinished (an error): the line goes, the error is printed after it.
            let bar = bars().add(ProgressBar::no_length().with_finish(ProgressFinish::AndClear));
            bar.set_style(counting_style(&what, total.is_some()));
            bar.enable_steady_tick(Duration::from_millis(1000 / REFRESH_HZ as u64));
            bar
        };
        Progress { what, bar, total, items: Arc::new(AtomicU64::new(0)), last_position: Arc::new(AtomicU64::new(0)) }
    }

    /// Adds `n` finished items; `position` is the amount of `total` covered so far, if known.
    /// With items counted, the bar's length is the items expected at this rate of `position`
    /// (so the rate, percent and ETA are in items); with `n == 0` it follows `position` alone
    /// (work measured by position, such as index construction).
    pub fn advance(&self, n: u64, position: Option<u64>) {
        let done = self.items.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(at) = position {
            self.last_position.store(at, Ordering::Relaxed);
        }
        self.show(done, position);
    }

    /// Counts the items of a batch of `len` as workers finish them, for a bar that moves
    /// while a large batch is worked on; `end_position` is where the batch ends in the input.
    /// The batch's items are still added with [`advance`](Self::advance) when it is done.
    pub fn batch(&self, len: usize, end_position: u64) -> BatchTicker<'_> {
        let start = self.last_position.load(Ordering::Relaxed);
        BatchTicker { progress: self, done: AtomicU64::new(0), len: len as u64, start, end: end_position.max(start) }
    }

    /// Draws `done` items at input `position`.
    fn show(&self, done: u64, position: Option<u64>) {
        match (self.total, position) {
            (Some(total), Some(at)) if done == 0 => {
                if self.bar.length() != Some(total) {
                    self.bar.set_style(fraction_style(&self.what));
                    self.bar.set_length(total);
                }
                self.bar.set_position(at.min(total));
                return;
            }
            (Some(total), Some(at)) if at > 0 => {
                let expected = (done as f64 * total as f64 / at as f64).ceil() as u64;
                self.bar.set_length(expected.max(done));
            }
            _ => {}
        }
        self.bar.set_position(done);
    }

    /// Items finished so far.
    pub fn items(&self) -> u64 {
        self.items.load(Ordering::Relaxed)
    }

    /// A short status shown at the end of the line (e.g. the best kernel time).
    pub fn set_message(&self, msg: impl Into<String>) {
        self.bar.set_message(msg.into());
    }

    /// Clears the line (the command's summary line, `crate::summary`, says the totals).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Seconds of work before an ETA is shown: the first moments (index loading, the first
/// batch) give no rate to extrapolate from.
const ETA_AFTER_S: f64 = 2.0;

/// The `{eta_known}` key: `, ETA 1m 20s` once some work is done and a rate is known, else
/// nothing (indicatif's `{eta}` extrapolates from nothing at first).
fn eta_known(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    if let Some(text) = eta_text(state.pos(), state.len(), state.elapsed(), state.eta()) {
        let _ = write!(out, "{text}");
    }
}

/// The ETA shown after `elapsed` with `pos` of `len` done: none before [`ETA_AFTER_S`] nor
/// before anything is done, nor without a length.
fn eta_text(pos: u64, len: Option<u64>, elapsed: Duration, eta: Duration) -> Option<String> {
    let rate_known = pos > 0 && elapsed.as_secs_f64() >= ETA_AFTER_S && len.is_some();
    rate_known.then(|| format!(", ETA {}", indicatif::HumanDuration(eta)))
}

/// A template with the `{eta_known}` key.
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .with_key("eta_known", eta_known)
        .progress_chars("=> ")
}

/// Items counted: a bar when the total is estimated from the input position, else a spinner.
fn counting_style(what: &str, estimated_total: bool) -> ProgressStyle {
    let template = if estimated_total {
        format!(
            "[bcuda] {what} [{{bar:20}}] {{percent:>3}}% {{human_pos}} {{per_sec:0}} {{elapsed}}{{eta_known}} {{msg}}"
        )
    } else {
        format!("[bcuda] {what} {{spinner}} {{human_pos}} {{per_sec:0}} {{elapsed}} {{msg}}")
    };
    style(&template)
}

/// Work measured by position only: percent and ETA.
fn fraction_style(what: &str) -> ProgressStyle {
    style(&format!("[bcuda] {what} [{{bar:20}}] {{percent:>3}}% {{elapsed}}{{eta_known}} {{msg}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_valid() {
        counting_style("reads", true);
        counting_style("reads", false);
        fraction_style("index");
    }

    #[test]
    fn hidden_progress_still_counts() {
        let p = Progress::new("reads", Some(1000), true);
        p.advance(10, Some(100));
        p.advance(10, Some(200));
        assert_eq!(p.items.load(Ordering::Relaxed), 20);
        assert_eq!(p.bar.position(), 20);
        assert_eq!(p.bar.length(), Some(100), "20 reads in 200 of 1000 bytes: 100 expected");
        p.finish();
        let f = Progress::new("index", Some(1000), true);
        f.advance(0, Some(250));
        assert_eq!((f.bar.position(), f.bar.length()), (250, Some(1000)));
    }

    /// A batch's items move the bar as they are done, its input span spread over them, long
    /// before the batch ends; the items count only when the batch is added.
    #[test]
    fn a_batch_moves_the_bar_before_it_ends() {
        let p = Progress::new("reads", Some(4000), true);
        p.advance(10_000, Some(1000));
        let batch = p.batch(3 * TICK_EVERY as usize, 2500);
        (0..TICK_EVERY).for_each(|_| batch.tick());
        assert_eq!(p.bar.position(), 10_000 + TICK_EVERY);
        let at = 1000 + 1500 / 3;
        assert_eq!(p.bar.length(), Some(((10_000 + TICK_EVERY) as f64 * 4000.0 / at as f64).ceil() as u64));
        assert_eq!(p.items(), 10_000);
        (TICK_EVERY..3 * TICK_EVERY).for_each(|_| batch.tick());
        p.advance(3 * TICK_EVERY, Some(2500));
        assert_eq!((p.items(), p.bar.position()), (10_000 + 3 * TICK_EVERY, 10_000 + 3 * TICK_EVERY));
    }

    #[test]
    fn no_eta_until_a_rate_is_known() {
        let (second, minute) = (Duration::from_secs(1), Duration::from_secs(60));
        assert_eq!(eta_text(0, Some(100), 10 * second, minute), None, "nothing done");
        assert_eq!(eta_text(5, Some(100), second, minute), None, "too soon");
        assert_eq!(eta_text(5, None, 10 * second, minute), None, "no length");
        assert_eq!(eta_text(5, Some(100), 10 * second, minute).as_deref(), Some(", ETA 60 seconds"));
    }
}
