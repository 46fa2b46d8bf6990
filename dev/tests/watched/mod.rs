//! bwa's stack with the `-m` guard's model watching, for the tests of the guard's kernels.

use bcuda::search::m_guard::GuardWatch;
use bcuda::search::stack::{Entry, GapStack, Next, SearchStack};

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
