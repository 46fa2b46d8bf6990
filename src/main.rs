//! `bcuda`: GPU short-read aligner compatible with BWA 0.7.17's `aln` path.

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(err) = bcuda_output::remove_temporaries_on_signals() {
        eprintln!("bcuda: warning: temporary files will not be removed on signals: {err}");
    }
    match bcuda::cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bcuda: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
