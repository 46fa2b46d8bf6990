//! What the tests of the `-m` guard's kernels share: bwa's stack with the guard's model
//! watching, and D array cells as the kernels take them.

use bcuda::search::m_guard::GuardWatch;
use bcuda::search::stack::{Entry, GapStack, Next, SearchStack};
use bcuda::search::Width;

/// A D array's cell as read_widths packs it: the width under 2^48, bid above.
pub fn packed(w: &Width) -> u64 {
    assert!(w.w < 1 << 48 && w.bid >= 0);
    w.w | (w.bid as u64) << 48
}

/// bwa's stack, counting its pops and showing the guard the pops before the first hit (kept in
/// `before_hit`), as prune-bound's stack does for the search bounded from the start.
pub struct Watched<'a> {
    inner: GapStack,
    pub pops: usize,
    /// Hits so far, as the last turn began.
    hits: usize,
    pub before_hit: Vec<Entry>,
    pub watch: GuardWatch<'a>,
}

impl<'a> Watched<'a> {
    pub fn new(watch: GuardWatch<'a>) -> Watched<'a> {
        Watched { inner: GapStack::default(), pops: 0, hits: 0, before_hit: Vec::new(), watch }
    }
}

impl SearchStack for Watched<'_> {
    fn reset(&mut self, n_stacks: usize) {
        self.inner.reset(n_stacks);
        (self.pops, self.hits) = (0, 0);
        self.before_hit.clear();
    }
    fn push(&mut self, e: Entry) {
        self.inner.push(e);
    }
    fn pop(&mut self) -> Next {
        self.pops += 1;
        self.inner.pop()
    }
    fn pop_held(&mut self) -> bool {
        self.pops += 1;
        true
    }
    fn n_entries(&self) -> usize {
        self.inner.n_entries()
    }
    fn turn(&mut self, _n_entries: usize, hits: usize) {
        self.hits = hits;
    }
    fn expanding(&mut self, e: &Entry) {
        if self.hits == 0 {
            self.before_hit.push(*e);
            self.watch.watch(e);
        }
    }
}
