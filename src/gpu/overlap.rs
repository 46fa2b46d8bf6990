//! How many batches ran kernels at once, from each batch's kernel spans on one GPU clock: the
//! share of the run's kernel time when none, one, or two and more did. The SMs' shares in aln's
//! summary say what the passes held; this says whether what no pass held was the GPU waiting
//! (no batch running a kernel), a batch running alone (a launch's tail with nothing beside it,
//! the first batch's start and the last one's drain), or kernels beside each other.

/// A kernel's start and end, in seconds from one origin on the GPU's clock.
pub type Span = (f64, f64);

/// The shares of the time from the first kernel's start to the last one's end during which no
/// batch, one batch, and two or more batches ran a kernel; `None` without a span of any length.
/// A batch's own kernels count once where they overlap.
pub fn batches_at_once(batches: &[Vec<Span>]) -> Option<[f64; 3]> {
    let mut edges: Vec<(f64, i32)> =
        batches.iter().flat_map(|spans| merged(spans)).flat_map(|(start, end)| [(start, 1), (end, -1)]).collect();
    // At equal times ends first: a batch that starts as another ends does not overlap it.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (first, last) = (edges.first()?.0, edges.last()?.0);
    if last <= first {
        return None;
    }
    let mut shares = [0.0; 3];
    let (mut running, mut at) = (0i32, first);
    for (time, step) in edges {
        shares[running.clamp(0, 2) as usize] += time - at;
        (running, at) = (running + step, time);
    }
    Some(shares.map(|s| s / (last - first)))
}

/// `spans` as disjoint spans in time order.
fn merged(spans: &[Span]) -> Vec<Span> {
    let mut sorted: Vec<Span> = spans.iter().copied().filter(|(s, e)| e > s).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Span> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn batches_beside_each_other_and_alone() {
        // A runs 0-2 and 3-4, B 1-5: one batch 0-1, both 1-2, B alone 2-3, both 3-4, B 4-5.
        let shares = batches_at_once(&[vec![(0.0, 2.0), (3.0, 4.0)], vec![(1.0, 5.0)]]).unwrap();
        assert!(close(shares, [0.0, 0.6, 0.4]), "{shares:?}");
    }

    #[test]
    fn a_gap_between_batches_is_none() {
        let shares = batches_at_once(&[vec![(0.0, 1.0)], vec![(2.0, 3.0)]]).unwrap();
        assert!(close(shares, [1.0 / 3.0, 2.0 / 3.0, 0.0]), "{shares:?}");
        // Touching spans of two batches do not overlap.
        let shares = batches_at_once(&[vec![(0.0, 1.0)], vec![(1.0, 2.0)]]).unwrap();
        assert!(close(shares, [0.0, 1.0, 0.0]), "{shares:?}");
    }

    #[test]
    fn a_batch_counts_once_where_its_kernels_overlap() {
        let shares = batches_at_once(&[vec![(0.0, 2.0), (1.0, 3.0), (2.5, 2.6)]]).unwrap();
        assert!(close(shares, [0.0, 1.0, 0.0]), "{shares:?}");
        // Three batches at once count as two or more.
        let three = vec![vec![(0.0, 1.0)]; 3];
        assert!(close(batches_at_once(&three).unwrap(), [0.0, 0.0, 1.0]));
    }

    #[test]
    fn no_spans_no_shares() {
        assert_eq!(batches_at_once(&[]), None);
        assert_eq!(batches_at_once(&[vec![(1.0, 1.0)]]), None);
    }
}
