//! bwa's pop order as a function of each entry's ancestry alone (docs/gpu-search.md, "A way to
//! bwa's order without bwa's search"): a stack that keeps bwa's `GapStack` and, beside it, each
//! entry's parent (the pop that pushed it), its rank among that pop's pushes and its chain, and
//! counts the pops that do not come in the order `before` gives from those ancestries.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use bcuda::search::stack::{Entry, GapStack, Next, SearchStack};

/// Where one entry of the search stands in its ancestry: a chain start (pushed) or a chain's
/// next entry (the matching child, popped at once).
pub struct Ancestry {
    pub score: i32,
    /// The chain's first entry (itself for a chain start).
    pub start: usize,
    pub depth: u32,
    /// The pop that pushed it, or whose chain it goes on (None: the root).
    pub up: Option<usize>,
    /// For a chain start: its rank among that pop's pushes.
    pub rank: u32,
}

/// bwa's pop order of entries `a` and `b` of `nodes` from their ancestries alone: lower score
/// first; in one chain, the shallower; else the chain started later first.
pub fn cmp_pop(nodes: &[Ancestry], a: usize, b: usize) -> Ordering {
    let (x, y) = (&nodes[a], &nodes[b]);
    if x.score != y.score {
        return x.score.cmp(&y.score);
    }
    if x.start == y.start {
        return x.depth.cmp(&y.depth);
    }
    cmp_push(nodes, y.start, x.start)
}

/// The push order of two chain starts: their pushers' pops, then their ranks.
fn cmp_push(nodes: &[Ancestry], a: usize, b: usize) -> Ordering {
    let (x, y) = (&nodes[a], &nodes[b]);
    match (x.up, y.up) {
        (Some(p), Some(q)) if p == q => x.rank.cmp(&y.rank),
        (Some(p), Some(q)) => cmp_pop(nodes, p, q),
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
    }
}

/// bwa's stack, checked against the ancestry order.
#[derive(Default)]
pub struct OrderChecked {
    inner: GapStack,
    nodes: Vec<Ancestry>,
    /// The nodes of the entries in `inner`, by score, last pushed last.
    waiting: BTreeMap<i32, Vec<usize>>,
    last_pop: Option<usize>,
    pushes_since_pop: u32,
    pub pops: u64,
    pub out_of_order: u64,
}

impl OrderChecked {
    fn popped(&mut self, id: usize) {
        if let Some(last) = self.last_pop {
            if cmp_pop(&self.nodes, last, id) != Ordering::Less {
                self.out_of_order += 1;
            }
        }
        self.last_pop = Some(id);
        self.pushes_since_pop = 0;
        self.pops += 1;
    }
}

impl SearchStack for OrderChecked {
    fn reset(&mut self, n_stacks: usize) {
        self.inner.reset(n_stacks);
        self.nodes.clear();
        self.waiting.clear();
        self.last_pop = None;
        self.pushes_since_pop = 0;
    }
    fn push(&mut self, e: Entry) {
        let id = self.nodes.len();
        let rank = self.pushes_since_pop;
        self.nodes.push(Ancestry { score: e.score() as i32, start: id, depth: 0, up: self.last_pop, rank });
        self.pushes_since_pop += 1;
        self.waiting.entry(e.score() as i32).or_default().push(id);
        self.inner.push(e);
    }
    fn pop(&mut self) -> Next {
        let next = self.inner.pop();
        if let Next::Entry(e) = &next {
            let mut lowest = self.waiting.first_entry().expect("a node for every entry");
            let id = lowest.get_mut().pop().expect("no empty score is kept");
            if lowest.get().is_empty() {
                lowest.remove();
            }
            assert_eq!(self.nodes[id].score, e.score() as i32, "the nodes follow bwa's stack");
            self.popped(id);
        }
        next
    }
    fn pop_held(&mut self) -> bool {
        let parent = self.last_pop.expect("a held entry follows a pop");
        let (score, start, depth) = {
            let p = &self.nodes[parent];
            (p.score, p.start, p.depth + 1)
        };
        let id = self.nodes.len();
        self.nodes.push(Ancestry { score, start, depth, up: Some(parent), rank: 0 });
        self.popped(id);
        true
    }
    fn n_entries(&self) -> usize {
        self.inner.n_entries()
    }
}
