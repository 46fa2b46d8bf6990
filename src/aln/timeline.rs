//! `BCUDA_TIMELINE=1`: when each batch passed each stage of the aln pipeline (parsed, packed,
//! submitted to, queued on and collected from a GPU, completed on the CPU, written), printed on stderr at
//! the end in seconds from the start. It shows where a run's time goes that the stages' busy
//! times do not: the pipeline's fill before the GPU starts and its drain after the last batch.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

struct Timeline {
    start: Instant,
    events: Mutex<Vec<(f64, Option<u64>, String)>>,
}

static TIMELINE: OnceLock<Option<Timeline>> = OnceLock::new();

fn timeline() -> Option<&'static Timeline> {
    TIMELINE
        .get_or_init(|| {
            std::env::var_os("BCUDA_TIMELINE")
                .filter(|v| v != "0")
                .map(|_| Timeline { start: Instant::now(), events: Mutex::new(Vec::new()) })
        })
        .as_ref()
}

/// Starts the clock (the first call, from `aln`, sets time zero).
pub fn start() {
    timeline();
}

/// Whether the timeline is kept (details worth computing only for it).
pub fn enabled() -> bool {
    timeline().is_some()
}

/// Batch `batch` (from 0, in input order) reached `stage` now.
pub fn mark(batch: u64, stage: impl Into<String>) {
    push(Some(batch), stage.into());
}

/// The whole run reached `stage` now (e.g. the GPUs released).
pub fn mark_run(stage: impl Into<String>) {
    push(None, stage.into());
}

fn push(batch: Option<u64>, stage: String) {
    if let Some(t) = timeline() {
        let at = t.start.elapsed().as_secs_f64();
        t.events.lock().unwrap_or_else(|e| e.into_inner()).push((at, batch, stage));
    }
}

/// The events in time order, one line each.
pub fn lines() -> Vec<String> {
    let Some(t) = timeline() else { return Vec::new() };
    let mut events = t.events.lock().unwrap_or_else(|e| e.into_inner()).clone();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    events
        .iter()
        .map(|(at, batch, stage)| match batch {
            Some(b) => format!("[bcuda aln] timeline {at:8.3} s  batch {b:4}  {stage}"),
            None => format!("[bcuda aln] timeline {at:8.3} s  {stage}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without BCUDA_TIMELINE nothing is kept (the tests' environment does not set it).
    #[test]
    fn off_unless_asked() {
        if std::env::var_os("BCUDA_TIMELINE").is_none() {
            mark(0, "parsed");
            assert!(lines().is_empty());
        }
    }
}
