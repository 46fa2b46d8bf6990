//! bwa's pop order as a function of each entry's ancestry alone (docs/gpu-search.md, "A way to
//! bwa's order without bwa's search"): a stack that keeps bwa's `GapStack` and, beside it, each
//! entry's parent (the pop that pushed it), its rank among that pop's pushes and its chain, and
//! counts the pops that do not come in the order `before` gives from those ancestries.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use bcuda::search::stack::{Entry, GapStack, Next, SearchStack};

/// One entry of the search: a chain start (pushed) or a chain's next entry (the matching child,
/// popped at once).
struct Node {
    score: i32,
    /// The chain's first entry (itself for a chain start).
    start: usize,
    depth: u32,
    /// For a chain start: the pop that pushed it (None: the root) and its rank among that
    /// pop's pushes.
    parent: Option<usize>,
    rank: u32,
}

/// bwa's stack, checked against the ancestry order.
#[derive(Default)]
pub struct OrderChecked {
    inner: GapStack,
    nodes: Vec<Node>,
    /// The nodes of the entries in `inner`, by score, last pushed last.
    waiting: BTreeMap<i32, Vec<usize>>,
    last_pop: Option<usize>,
    pushes_since_pop: u32,
    pub pops: u64,
    pub out_of_order: u64,
}

impl OrderChecked {
    /// Whether node a is popped before node b by the ancestry rule: lower score first; in one
    /// chain, the shallower; else the chain started later first.
    fn before(&self, a: usize, b: usize) -> bool {
        self.cmp_pop(a, b) == Ordering::Less
    }

    fn cmp_pop(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        if x.score != y.score {
            return x.score.cmp(&y.score);
        }
        if x.start == y.start {
            return x.depth.cmp(&y.depth);
        }
        self.cmp_push(y.start, x.start)
    }

    /// The push order of two chain starts: their parents' pops, then their ranks.
    fn cmp_push(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        match (x.parent, y.parent) {
            (Some(p), Some(q)) if p == q => x.rank.cmp(&y.rank),
            (Some(p), Some(q)) => self.cmp_pop(p, q),
            (None, _) => Ordering::Less,
            (_, None) => Ordering::Greater,
        }
    }

    fn popped(&mut self, id: usize) {
        if let Some(last) = self.last_pop {
            if !self.before(last, id) {
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
        self.nodes.push(Node { score: e.score() as i32, start: id, depth: 0, parent: self.last_pop, rank });
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
        self.nodes.push(Node { score, start, depth, parent: None, rank: 0 });
        self.popped(id);
        true
    }
    fn n_entries(&self) -> usize {
        self.inner.n_entries()
    }
}
