//! How many batches ran kernels at once, from each batch's kernel spans on one GPU clock: the
//! share of the run's kernel time when none, one, or two and more did. The SMs' shares in aln's
//! summary say what the passes held; this says whether what no pass held was the GPU waiting
//! (no batch running a kernel), a batch running alone (a launch's tail with nothing beside it,
//! the first batch's start and the last one's drain), or kernels beside each other.

/// A kernel's start and end, in seconds from one origin on the GPU's clock.
pub type Span = (f64, f64);

/// Shares of the time from the first kernel's start to the last one's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlap {
    /// No batch ran a kernel: the GPU waited for the host.
    pub none: f64,
    /// One batch ran kernels, the others none.
    pub one: f64,
    /// Two or more batches ran kernels.
    pub more: f64,
    /// Of `one`: before two batches first ran at once and after they last did (the run's
    /// start and drain).
    pub one_at_ends: f64,
    /// Of `one` between the ends: by the lone batch's kernel (the index of its span), e.g.
    /// pass 3's tail with nothing beside it.
    pub one_by_kernel: Vec<f64>,
}

/// How many batches ran kernels at once over the run; `None` without a span of any length.
/// A batch's spans are its kernels in the order queued on its stream; where they overlap the
/// batch counts once, and the later kernel is the one running.
pub fn batches_at_once(batches: &[Vec<Span>]) -> Option<Overlap> {
    let segments = segments(batches);
    let (first, last) = (segments.first()?.start, segments.last()?.end);
    if last <= first {
        return None;
    }
    let together = |s: &&Segment| s.running >= 2;
    let (both_from, both_to) = match (segments.iter().find(together), segments.iter().rev().find(together)) {
        (Some(a), Some(b)) => (a.start, b.end),
        _ => (last, last),
    };
    let n_kernels = batches.iter().map(Vec::len).max().unwrap_or(0);
    let mut o = Overlap { none: 0.0, one: 0.0, more: 0.0, one_at_ends: 0.0, one_by_kernel: vec![0.0; n_kernels] };
    for s in &segments {
        let share = (s.end - s.start) / (last - first);
        match (s.running, s.lone_kernel) {
            (0, _) => o.none += share,
            (1, Some(k)) => {
                o.one += share;
                if s.end <= both_from || s.start >= both_to {
                    o.one_at_ends += share;
                } else {
                    o.one_by_kernel[k] += share;
                }
            }
            _ => o.more += share,
        }
    }
    Some(o)
}

/// A stretch of time over which the same batches ran kernels.
struct Segment {
    start: f64,
    end: f64,
    running: usize,
    /// With one batch running, its latest kernel running.
    lone_kernel: Option<usize>,
}

/// The run's time cut at every kernel's start and end, first kernel to last.
fn segments(batches: &[Vec<Span>]) -> Vec<Segment> {
    // (time, +1 start / -1 end, batch, kernel); at equal times ends first: a batch that starts
    // as another ends does not overlap it.
    let mut edges: Vec<(f64, i32, usize, usize)> = batches
        .iter()
        .enumerate()
        .flat_map(|(b, spans)| spans.iter().enumerate().filter(|(_, (s, e))| e > s).map(move |(k, &sp)| (b, k, sp)))
        .flat_map(|(b, k, (start, end))| [(start, 1, b, k), (end, -1, b, k)])
        .collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    // Per batch: its kernels running now.
    let mut active: Vec<Vec<usize>> = vec![Vec::new(); batches.len()];
    let mut running: std::collections::BTreeSet<usize> = Default::default();
    let mut out = Vec::with_capacity(edges.len());
    let mut at = edges.first().map_or(0.0, |e| e.0);
    for (time, step, b, k) in edges {
        if time > at {
            let lone_kernel =
                (running.len() == 1).then(|| active[*running.first().unwrap()].iter().max().copied()).flatten();
            out.push(Segment { start: at, end: time, running: running.len(), lone_kernel });
            at = time;
        }
        if step > 0 {
            active[b].push(k);
            running.insert(b);
        } else {
            active[b].retain(|&x| x != k);
            if active[b].is_empty() {
                running.remove(&b);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(batches: &[Vec<Span>]) -> [f64; 3] {
        let o = batches_at_once(batches).unwrap();
        [o.none, o.one, o.more]
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn batches_beside_each_other_and_alone() {
        // A runs 0-2 and 3-4, B 1-5: one batch 0-1, both 1-2, B alone 2-3, both 3-4, B 4-5.
        let s = shares(&[vec![(0.0, 2.0), (3.0, 4.0)], vec![(1.0, 5.0)]]);
        assert!(close(&s, &[0.0, 0.6, 0.4]), "{s:?}");
    }

    #[test]
    fn a_gap_between_batches_is_none() {
        let s = shares(&[vec![(0.0, 1.0)], vec![(2.0, 3.0)]]);
        assert!(close(&s, &[1.0 / 3.0, 2.0 / 3.0, 0.0]), "{s:?}");
        // Touching spans of two batches do not overlap.
        let s = shares(&[vec![(0.0, 1.0)], vec![(1.0, 2.0)]]);
        assert!(close(&s, &[0.0, 1.0, 0.0]), "{s:?}");
    }

    #[test]
    fn a_batch_counts_once_where_its_kernels_overlap() {
        let s = shares(&[vec![(0.0, 2.0), (1.0, 3.0), (2.5, 2.6)]]);
        assert!(close(&s, &[0.0, 1.0, 0.0]), "{s:?}");
        // Three batches at once count as two or more.
        assert!(close(&shares(&vec![vec![(0.0, 1.0)]; 3]), &[0.0, 0.0, 1.0]));
    }

    #[test]
    fn a_lone_batch_at_the_ends_and_by_its_kernel_between() {
        // A: kernel 0 over 0-2, kernel 1 over 2-6; B: kernel 0 over 1-3, kernel 1 over 5-8.
        // A alone 0-1 (start), both 1-3, A's kernel 1 alone 3-5, both 5-6, B alone 6-8 (drain).
        let o = batches_at_once(&[vec![(0.0, 2.0), (2.0, 6.0)], vec![(1.0, 3.0), (5.0, 8.0)]]).unwrap();
        assert!(close(&[o.none, o.one, o.more], &[0.0, 5.0 / 8.0, 3.0 / 8.0]), "{o:?}");
        assert!((o.one_at_ends - 3.0 / 8.0).abs() < 1e-12, "{o:?}");
        assert!(close(&o.one_by_kernel, &[0.0, 2.0 / 8.0]), "{o:?}");
    }

    #[test]
    fn never_two_at_once_is_all_ends() {
        let o = batches_at_once(&[vec![(0.0, 1.0)], vec![(2.0, 3.0)]]).unwrap();
        assert!((o.one_at_ends - o.one).abs() < 1e-12, "{o:?}");
        assert!(o.one_by_kernel.iter().all(|&x| x == 0.0), "{o:?}");
    }

    #[test]
    fn no_spans_no_shares() {
        assert_eq!(batches_at_once(&[]), None);
        assert_eq!(batches_at_once(&[vec![(1.0, 1.0)]]), None);
    }
}
