//! `bcuda`: GPU short-read aligner compatible with BWA 0.7.17's `aln` path.

use std::process::ExitCode;

/// The shell's status for a process that SIGPIPE ended (128 + 13), as bwa's would be.
const CLOSED_PIPE_STATUS: u8 = 141;

fn main() -> ExitCode {
    if let Err(err) = bcuda_output::remove_temporaries_on_signals() {
        eprintln!("bcuda: warning: temporary files will not be removed on signals: {err}");
    }
    match bcuda::cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`| head`): nothing to say.
        Err(err) if err.chain().any(bcuda_output::is_closed_pipe) => ExitCode::from(CLOSED_PIPE_STATUS),
        Err(err) => {
            eprintln!("bcuda: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
