//! cuda/queue_order.cu built for the CPU (queue_order/host.cpp): order_by_weight sorts a team
//! pass's queue heaviest first, in buckets of 16 an octave, and loses no read. Skipped without a
//! C++ compiler (`CXX`, else `c++`).

mod common;

use bcuda::gpu::queue_order::weight_bucket;
use bcuda::search::seeded::xorshift;

fn run(host: &std::path::Path, weights: &[u32], queue: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut input = format!("{} {}\n", weights.len(), queue.len());
    for x in weights.iter().chain(queue) {
        input += &format!("{x} ");
    }
    let text = common::run_host(host, &input);
    let mut lines = text.lines().map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect::<Vec<u32>>());
    (lines.next().unwrap_or_default(), lines.next().unwrap_or_default())
}

#[test]
fn the_queue_comes_heaviest_bucket_first_with_every_read() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "queue_order/host.cpp", "queue_order", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let fixed = [0u32, 1, 15, 16, 17, 31, 32, 34, 1024, 1088, 2047, 2048, u32::MAX];
    let (_, buckets) = run(&host, &fixed, &[]);
    assert_eq!(buckets, fixed.map(|w| weight_bucket(w as u64)));
    assert_eq!(buckets[..12], [0, 1, 15, 16, 17, 31, 32, 33, 112, 113, 127, 128]);
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for (n, q) in [(1usize, 1usize), (5000, 3000), (20_000, 20_000)] {
        // Weights spread over many octaves, as the root chains' are, with ties.
        let weights: Vec<u32> = (0..n).map(|_| (next() % 4096) as u32 >> (next() % 12)).collect();
        let mut ids: Vec<u32> = (0..n as u32).collect();
        for i in (1..ids.len()).rev() {
            ids.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let queue = &ids[..q];
        let (sorted, _) = run(&host, &weights, queue);
        let (mut a, mut b) = (sorted.clone(), queue.to_vec());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "every read of the queue, once");
        let order: Vec<u32> = sorted.iter().map(|&id| weight_bucket(weights[id as usize] as u64)).collect();
        assert!(order.windows(2).all(|w| w[0] >= w[1]), "heaviest bucket first");
    }
}
