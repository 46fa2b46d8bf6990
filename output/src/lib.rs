//! Where the commands' outputs go.
//!
//! A regular file is written to a temporary file beside it and renamed over it only when
//! the writer commits, so it is never seen half-written. Anything else a path may name (a
//! device, a FIFO, an open descriptor such as `/dev/fd/N`) is written through, as bwa's
//! plain `fopen(path, "w")` would. Temporary files are removed on error, on SIGINT, SIGTERM
//! and SIGHUP ([`remove_temporaries_on_signals`]), and a stale one never blocks a later run.

mod closed;
mod output;
mod signals;
mod target;
mod temporary;

pub use closed::{is_closed_pipe, ClosedPipe};
pub use output::Output;
pub use signals::remove_temporaries_on_signals;
