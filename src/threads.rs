//! Thread counts asked for with `-t`, capped at what the machine runs at once: more threads
//! only add start-up time (`-t 20000` took over a minute for 1,000 reads).

/// Threads this machine runs at once.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The threads to start for `-t requested`: at most [`available`]; says so on stderr when it
/// caps (unless `quiet`).
pub fn capped(command: &str, requested: usize, quiet: bool) -> usize {
    let most = available();
    if requested <= most {
        return requested;
    }
    if !quiet {
        eprintln!("[bcuda {command}] -t {requested}: this machine runs {most} threads at once; using {most}");
    }
    most
}
