//! `bcuda`: GPU short-read aligner compatible with BWA 0.7.17's `aln` path.

use std::process::ExitCode;

fn main() -> ExitCode {
    match bcuda::cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bcuda: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
