//! bwa's hits rebuilt from candidate paths (docs/gpu-search.md, "A way to bwa's order without
//! bwa's search"). Every path of bwa's step rules up to the best score plus `s_mm` is found by a
//! depth-first walk with the read's first state (after a hit bwa only prunes more), and kept
//! where it ends in a hit. The entries on the kept paths are then popped in the ancestry order
//! (dev/src/pop_order.rs) and run through bwa's step and hit rules, children living only where
//! their parent's step still pushes them. The walk stands in for a faster enumeration: what
//! this checks is that the order and the replay give bwa's hits.

use std::cmp::Ordering;

use bcuda::sai::{AlnHit, GapOptions};
use bcuda::search::stack::Entry;
use bcuda::search::{AfterHit, HitList, Search, Step, Width};

/// An entry of the walk: pushed by `up`'s step (a chain start, with its rank among the pushes)
/// or the matching child `up` returned (the next of `up`'s chain).
struct Node {
    entry: Entry,
    up: Option<usize>,
    start: usize,
    depth: u32,
    rank: u32,
    on_hit_path: bool,
}

/// The walk's tree and the ancestry order over it.
struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn add(&mut self, entry: Entry, up: Option<usize>, chain_of: Option<usize>, rank: u32) -> usize {
        let id = self.nodes.len();
        let (start, depth) = match chain_of {
            Some(p) => (self.nodes[p].start, self.nodes[p].depth + 1),
            None => (id, 0),
        };
        self.nodes.push(Node { entry, up, start, depth, rank, on_hit_path: false });
        id
    }

    fn score(&self, a: usize) -> usize {
        self.nodes[a].entry.score()
    }

    /// Pop order: lower score first; in one chain, the shallower; else the chain started later.
    fn cmp_pop(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        if self.score(a) != self.score(b) {
            return self.score(a).cmp(&self.score(b));
        }
        if x.start == y.start {
            return x.depth.cmp(&y.depth);
        }
        self.cmp_push(y.start, x.start)
    }

    /// Push order of two chain starts: their pushers' pops, then their ranks.
    fn cmp_push(&self, a: usize, b: usize) -> Ordering {
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        match (x.up, y.up) {
            (Some(p), Some(q)) if p == q => x.rank.cmp(&y.rank),
            (Some(p), Some(q)) => self.cmp_pop(p, q),
            (None, _) => Ordering::Less,
            (_, None) => Ordering::Greater,
        }
    }
}

/// The walk: every entry up to `bound` reachable by bwa's step with the first state.
fn walk(search: &Search, width: &[Width], max_diff: i32, bound: usize, most: usize) -> Option<Tree> {
    let mut tree = Tree { nodes: Vec::new() };
    let root = tree.add(search.root(), None, None, 0);
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if tree.nodes.len() > most {
            return None;
        }
        let e = tree.nodes[id].entry;
        let mut pushed = Vec::new();
        match search.step(&e, max_diff, width, &mut |c| pushed.push(c)) {
            Step::Hit(..) => mark_path(&mut tree, id),
            Step::Done => {}
            Step::Expanded(matching) => {
                for (rank, c) in pushed.into_iter().enumerate() {
                    if c.score() <= bound {
                        todo.push(tree.add(c, Some(id), None, rank as u32));
                    }
                }
                if let Some(m) = matching {
                    todo.push(tree.add(m, Some(id), Some(id), 0));
                }
            }
        }
    }
    Some(tree)
}

fn mark_path(tree: &mut Tree, mut id: usize) {
    loop {
        if tree.nodes[id].on_hit_path {
            return;
        }
        tree.nodes[id].on_hit_path = true;
        match tree.nodes[id].up {
            Some(up) => id = up,
            None => return,
        }
    }
}

/// bwa's hits of the read from its candidate paths, and the entries on those paths (what the
/// replay pops), or None where the walk outgrew `most` entries. `best` is the best hit's score
/// (bwa's), which bounds the walk.
pub fn replayed_hits(
    search: &Search,
    width: &[Width],
    opt: &GapOptions,
    best: Option<u32>,
    most: usize,
) -> Option<(Vec<AlnHit>, usize)> {
    let mut found = HitList::new(opt);
    let Some(best) = best else { return Some((Vec::new(), 0)) };
    if search.too_many_ns(found.max_diff) {
        return Some((Vec::new(), 0));
    }
    let bound = best as usize + opt.s_mm as usize;
    let tree = walk(search, width, found.max_diff, bound, most)?;
    let mut order: Vec<usize> = (0..tree.nodes.len()).filter(|&i| tree.nodes[i].on_hit_path).collect();
    order.sort_by(|&a, &b| tree.cmp_pop(a, b));
    let mut width = width.to_vec();
    let mut alive = vec![false; tree.nodes.len()];
    alive[0] = true;
    let children: Vec<Vec<usize>> = {
        let mut c = vec![Vec::new(); tree.nodes.len()];
        for &i in &order {
            if let Some(up) = tree.nodes[i].up {
                c[up].push(i);
            }
        }
        c
    };
    for &id in &order {
        if !alive[id] {
            continue;
        }
        let e = tree.nodes[id].entry;
        if found.ends_before(e.score() as i32, opt) {
            break;
        }
        let mut pushed = Vec::new();
        match search.step(&e, found.max_diff, &width, &mut |c| pushed.push(c)) {
            Step::Done => {}
            Step::Hit(k, l) => match found.record(&e, k, l, &mut width, search.bwt.seq_len(), opt) {
                AfterHit::Stop => break,
                AfterHit::Go | AfterHit::FirstHit(_) => {}
            },
            Step::Expanded(matching) => {
                for &c in &children[id] {
                    let entry = tree.nodes[c].entry;
                    alive[c] = pushed.contains(&entry) || matching == Some(entry);
                }
            }
        }
    }
    Some((found.hits, order.len()))
}
