//! Where the plain word-by-word suffix comparison spends its time: sorts every bucket (the
//! index's first-K-bases buckets) with that comparison, counting the 32-base words each
//! comparison reads, and reports them by comparison depth, by whether the suffixes start in
//! N runs (filled by bwa's `lrand48() & 3`) and by bucket.
//!
//! `cargo run --release -p bcuda-index --example sort_profile -- genome.fa`

use std::path::Path;

use bcuda_index::build::pack_fasta;
use bcuda_index::suffix_sort::{bucket_bases, compare_suffixes_counting};
use bcuda_index::text::PackedText;
use rayon::prelude::*;

const DEPTH_BINS: usize = 24;

#[derive(Default, Clone)]
struct Stats {
    comparisons: u64,
    words: u64,
    /// Comparisons and words by depth: bin b holds depths of 2^(b-1) to 2^b - 1 words.
    by_depth: [(u64, u64); DEPTH_BINS],
    /// Words of comparisons whose suffixes both / one / neither start in an N run.
    by_n: [u64; 3],
    /// The buckets with most words: (words, bucket, size, first position).
    top: Vec<(u64, usize, usize, u64)>,
}

impl Stats {
    fn merge(mut self, o: Stats) -> Stats {
        self.comparisons += o.comparisons;
        self.words += o.words;
        for b in 0..DEPTH_BINS {
            self.by_depth[b].0 += o.by_depth[b].0;
            self.by_depth[b].1 += o.by_depth[b].1;
        }
        for c in 0..3 {
            self.by_n[c] += o.by_n[c];
        }
        self.top.extend(o.top);
        self.top.sort_unstable_by(|a, b| b.cmp(a));
        self.top.truncate(10);
        self
    }
}

fn main() {
    let fasta = std::env::args().nth(1).expect("usage: sort_profile genome.fa");
    let reference = pack_fasta(Path::new(&fasta)).expect("readable FASTA");
    let text = PackedText::with_reverse_complement(&reference.forward);
    let n = text.len();
    // Forward coordinates in N runs; a reverse-strand position p reads forward base n-1-p.
    let mut in_n = vec![false; reference.forward.len() as usize];
    for h in &reference.holes {
        in_n[h.offset as usize..(h.offset + h.len) as usize].fill(true);
    }
    let starts_in_n = |p: u64| in_n[(if p < n / 2 { p } else { n - 1 - p }) as usize];

    let k = bucket_bases(n);
    let bucket_of = |i: u64| (text.window(i) >> (64 - 2 * k)) as usize;
    let n_buckets = 1usize << (2 * k);
    let mut starts = vec![0usize; n_buckets + 1];
    for i in 0..n {
        starts[bucket_of(i) + 1] += 1;
    }
    for b in 1..=n_buckets {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    let mut positions = vec![0u32; n as usize];
    for i in 0..n {
        let b = bucket_of(i);
        positions[next[b]] = i as u32;
        next[b] += 1;
    }

    let t0 = std::time::Instant::now();
    let stats = (0..n_buckets)
        .into_par_iter()
        .fold(Stats::default, |mut s, b| {
            let mut bucket: Vec<u64> = positions[starts[b]..starts[b + 1]].iter().map(|&p| p as u64).collect();
            let mut words_here = 0;
            bucket.sort_unstable_by(|&x, &y| {
                let (o, w) = compare_suffixes_counting(&text, x, y);
                let bin = (64 - w.leading_zeros() as usize).min(DEPTH_BINS - 1);
                s.by_depth[bin].0 += 1;
                s.by_depth[bin].1 += w;
                s.by_n[2 - starts_in_n(x) as usize - starts_in_n(y) as usize] += w;
                s.comparisons += 1;
                words_here += w;
                o
            });
            s.words += words_here;
            if words_here > 0 {
                s.top.push((words_here, b, bucket.len(), bucket[0]));
                if s.top.len() > 64 {
                    s.top.sort_unstable_by(|a, b| b.cmp(a));
                    s.top.truncate(10);
                }
            }
            s
        })
        .reduce(Stats::default, Stats::merge);
    let n_bases: usize = in_n.iter().filter(|&&x| x).count();
    println!(
        "{fasta}: n = {n} suffixes, K = {k}, {} buckets; N-run bases {} of {} ({:.2} %)",
        n_buckets,
        n_bases,
        in_n.len(),
        100.0 * n_bases as f64 / in_n.len() as f64
    );
    println!(
        "plain sort: {:.1} s (threads {}), {} comparisons, {} words ({:.1} per comparison)",
        t0.elapsed().as_secs_f64(),
        rayon::current_num_threads(),
        stats.comparisons,
        stats.words,
        stats.words as f64 / stats.comparisons as f64
    );
    println!(
        "words by suffixes starting in N runs: both {:.1} %, one {:.1} %, neither {:.1} %",
        100.0 * stats.by_n[0] as f64 / stats.words as f64,
        100.0 * stats.by_n[1] as f64 / stats.words as f64,
        100.0 * stats.by_n[2] as f64 / stats.words as f64
    );
    println!("depth (words read)\tcomparisons\twords\tshare of words");
    for (b, &(c, w)) in stats.by_depth.iter().enumerate().filter(|(_, &(c, _))| c > 0) {
        let lo = if b == 0 { 0 } else { 1u64 << (b - 1) };
        println!("{}-{}\t{}\t{}\t{:.2} %", lo, (1u64 << b) - 1, c, w, 100.0 * w as f64 / stats.words as f64);
    }
    println!("heaviest buckets: words, size, first suffix's position (strand, in N run)");
    for &(w, _, size, p) in &stats.top {
        let strand = if p < n / 2 { "+" } else { "-" };
        println!("{w}\t{size}\t{p} ({strand}, {})", if starts_in_n(p) { "N run" } else { "sequence" });
    }
}
