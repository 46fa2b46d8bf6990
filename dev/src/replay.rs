//! bwa's hits rebuilt from candidate paths (docs/gpu-search.md, "A way to bwa's order without
//! bwa's search"). Every path of bwa's step rules up to the best score plus `s_mm` is found by a
//! depth-first walk with the read's first state (after a hit bwa only prunes more), and kept
//! where it ends in a hit. The entries on the kept paths are then popped in the ancestry order
//! (dev/src/pop_order.rs) and run through bwa's step and hit rules, children living only where
//! their parent's step still pushes them. The walk stands in for a faster enumeration: what
//! this checks is that the order and the replay give bwa's hits.

use bcuda::sai::{AlnHit, GapOptions};
use bcuda::search::stack::Entry;
use bcuda::search::{AfterHit, HitList, Search, Step, Width};

use crate::pop_order::{cmp_pop, Ancestry};

/// The walk's tree: each entry, where it stands in its ancestry (pushed by `up`'s step, a
/// chain start, or the matching child `up` returned), and whether a hit's path goes through it.
struct Tree {
    entries: Vec<Entry>,
    nodes: Vec<Ancestry>,
    on_hit_path: Vec<bool>,
}

impl Tree {
    fn add(&mut self, entry: Entry, up: Option<usize>, chain_of: Option<usize>, rank: u32) -> usize {
        let id = self.nodes.len();
        let (start, depth) = match chain_of {
            Some(p) => (self.nodes[p].start, self.nodes[p].depth + 1),
            None => (id, 0),
        };
        self.entries.push(entry);
        self.nodes.push(Ancestry { score: entry.score() as i32, start, depth, up, rank });
        self.on_hit_path.push(false);
        id
    }
}

/// The walk: every entry up to `bound` reachable by bwa's step with the first state.
fn walk(search: &Search, width: &[Width], max_diff: i32, bound: usize, most: usize) -> Option<Tree> {
    let mut tree = Tree { entries: Vec::new(), nodes: Vec::new(), on_hit_path: Vec::new() };
    let root = tree.add(search.root(), None, None, 0);
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if tree.nodes.len() > most {
            return None;
        }
        let e = tree.entries[id];
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
        if tree.on_hit_path[id] {
            return;
        }
        tree.on_hit_path[id] = true;
        match tree.nodes[id].up {
            Some(up) => id = up,
            None => return,
        }
    }
}

/// bwa's hits of the read from its candidate paths, and the entries on those paths (what the
/// replay pops) off the root's chain, or None where the walk outgrew `most` entries. `best` is
/// the best hit's score (bwa's), which bounds the walk.
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
    let mut order: Vec<usize> = (0..tree.nodes.len()).filter(|&i| tree.on_hit_path[i]).collect();
    order.sort_by(|&a, &b| cmp_pop(&tree.nodes, a, b));
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
        let e = tree.entries[id];
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
                    let entry = tree.entries[c];
                    alive[c] = pushed.contains(&entry) || matching == Some(entry);
                }
            }
        }
    }
    // The root's chain is the read's exact backward search, which read_widths already gives.
    let off_root_chain = order.iter().filter(|&&i| tree.nodes[i].start != 0).count();
    Some((found.hits, off_root_chain))
}
