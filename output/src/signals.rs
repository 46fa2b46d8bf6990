//! SIGINT, SIGTERM and SIGHUP remove the temporary files before the process exits.
//!
//! signal-hook's iterator receives the signal on an ordinary thread: removing files takes a
//! lock and allocates, neither of which a signal handler may do.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// From now on, SIGINT, SIGTERM and SIGHUP remove the temporary files and exit with the
/// shell's status for the signal, 128 + its number. A signal ignored when the process
/// started (`nohup`, SIGINT in a background job) stays ignored.
pub fn remove_temporaries_on_signals() -> std::io::Result<()> {
    let caught: Vec<i32> = [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !ignored(s)).collect();
    let mut signals = Signals::new(caught)?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _held = crate::temporary::remove_all_for_good();
            std::process::exit(128 + signal);
        }
    })?;
    Ok(())
}

/// Whether `signal`'s action is to ignore it.
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction with no new action only reads the current one into `current`.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut current) == 0 && current.sa_sigaction == libc::SIG_IGN
    }
}
