//! Times loading an index's `.bwt` and `.sa` (memory-mapped, their bodies checked) and, alone,
//! the checks of their bodies: the `.bwt`'s checkpoints against its bases, the `.sa`'s
//! samples against the text length. Round 1 maps the pages in; later rounds find them mapped.
//!
//! `cargo run --release -p bcuda-index --example load_check_cost -- PREFIX [ROUNDS]`

use std::path::Path;
use std::time::Instant;

use bcuda_index::{bwt_check, sa, with_ext, Bwt, SuffixArray};

/// Seconds since `t`.
fn since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let prefix = args.next().expect("usage: load_check_cost PREFIX [ROUNDS]");
    let rounds: usize = args.next().map_or(3, |s| s.parse().expect("a number of rounds"));
    let prefix = Path::new(&prefix);
    println!("round\tthreads\tbwt_load_s\tbwt_check_s\tsa_load_s\tsa_check_s\tbwt_bytes\tsa_bytes");
    for round in 1..=rounds {
        let t = Instant::now();
        let bwt = Bwt::load(&with_ext(prefix, ".bwt")).expect("a valid .bwt");
        let bwt_load = since(t);
        let t = Instant::now();
        assert_eq!(bwt_check::first_bad_checkpoint(bwt.words(), bwt.seq_len()), None);
        let bwt_check = since(t);
        let t = Instant::now();
        let _sa = SuffixArray::load(&with_ext(prefix, ".sa"), &bwt).expect("a valid .sa");
        let sa_load = since(t);
        let sa_bytes = std::fs::read(with_ext(prefix, ".sa")).expect("readable .sa");
        let t = Instant::now();
        assert_eq!(sa::first_sample_beyond(&sa_bytes[56..], bwt.seq_len()), None);
        let sa_check = since(t);
        let threads = rayon::current_num_threads();
        println!(
            "{round}\t{threads}\t{bwt_load:.3}\t{bwt_check:.3}\t{sa_load:.3}\t{sa_check:.3}\t{}\t{}",
            bwt.words().len() * 4 + 40,
            sa_bytes.len()
        );
    }
}
