//! `bcuda`: GPU short-read aligner compatible with BWA 0.7.17's `aln` path.

use std::process::ExitCode;

fn main() -> ExitCode {
    match bcuda::cli::run() {
        Ok(()) => {
            // Every output is committed by now. Ending here skips the CUDA driver's exit
            // handlers, which tear down each context (tens of GB of scratch and pinned
            // buffers) and took about 0.2 s of a 2 s GPU aln: the kernel frees it all anyway.
            use std::io::Write;
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            // SAFETY: _exit ends the process; nothing after it runs.
            unsafe { libc::_exit(0) }
        }
        Err(err) => {
            eprintln!("bcuda: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
