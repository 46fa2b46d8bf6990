//! A reader that closed its end of the pipe (`bcuda samse ... | head`): the command stops
//! quietly, as bwa and samtools do, and `main` tells it from other errors by this type.

use std::error::Error;
use std::fmt;

/// Writing to an output whose reader has gone (EPIPE).
#[derive(Debug)]
pub struct ClosedPipe {
    pub output: String,
}

impl fmt::Display for ClosedPipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: the reader closed the pipe", self.output)
    }
}

impl Error for ClosedPipe {}

/// True when `error` is, or wraps in an `io::Error`, a [`ClosedPipe`].
pub fn is_closed_pipe(error: &(dyn Error + 'static)) -> bool {
    error.is::<ClosedPipe>()
        || error
            .downcast_ref::<std::io::Error>()
            .and_then(|e| e.get_ref())
            .is_some_and(|inner| inner.is::<ClosedPipe>())
}
