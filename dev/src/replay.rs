//! bwa's hits rebuilt from candidate paths (docs/gpu-search.md, "A way to bwa's order without
//! bwa's search"). The entries on the paths are popped in the ancestry order
//! (dev/src/pop_order.rs) and run through bwa's step and hit rules, children living only where
//! their parent's step still pushes them. The paths come from a depth-first walk of bwa's step
//! rules with the read's first state up to the best score plus `s_mm` ([`replayed_hits`]: what
//! the order and the replay need), or from strings an enumeration found ([`candidate_tree`],
//! dev/src/hamming.rs).

use std::collections::HashMap;

use bcuda::sai::{AlnHit, GapOptions};
use bcuda::search::stack::Entry;
use bcuda::search::{AfterHit, HitList, Search, Step, Width, STATE_M};

use crate::hamming::Substitutions;
use crate::pop_order::{cmp_pop, Ancestry};

/// How a node is told among its parent's children: by its entry (the walk knows it), or by
/// the read position it reaches and the base it takes there (a candidate string's node, whose
/// entry is known once its parent is stepped).
#[derive(Clone, Copy)]
pub enum Link {
    Entry(Entry),
    Base { i: i32, base: u8 },
}

/// The paths' tree: each node's link and where it stands in its ancestry (pushed by `up`'s
/// step, a chain start, or the matching child `up` returned).
pub struct Tree {
    links: Vec<Link>,
    nodes: Vec<Ancestry>,
}

impl Tree {
    fn new(root: Entry) -> Tree {
        let mut tree = Tree { links: Vec::new(), nodes: Vec::new() };
        tree.add(Link::Entry(root), root.score() as i32, None, None, 0);
        tree
    }

    fn add(&mut self, link: Link, score: i32, up: Option<usize>, chain_of: Option<usize>, rank: u32) -> usize {
        let id = self.nodes.len();
        let (start, depth) = match chain_of {
            Some(p) => (self.nodes[p].start, self.nodes[p].depth + 1),
            None => (id, 0),
        };
        self.links.push(link);
        self.nodes.push(Ancestry { score, start, depth, up, rank });
        id
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }
}

/// The walk: every entry up to `bound` reachable by bwa's step with the first state, and
/// which of them lie on a path that ends in a hit.
fn walk(search: &Search, width: &[Width], max_diff: i32, bound: usize, most: usize) -> Option<(Tree, Vec<bool>)> {
    let mut tree = Tree::new(search.root());
    let mut on_hit_path = vec![false];
    let mut todo = vec![0];
    while let Some(id) = todo.pop() {
        if tree.len() > most {
            return None;
        }
        let Link::Entry(e) = tree.links[id] else { unreachable!("the walk links by entry") };
        let mut pushed = Vec::new();
        match search.step(&e, max_diff, width, &mut |c| pushed.push(c)) {
            Step::Hit(..) => mark_path(&tree, &mut on_hit_path, id),
            Step::Done => {}
            Step::Expanded(matching) => {
                for (rank, c) in pushed.into_iter().enumerate() {
                    if c.score() <= bound {
                        todo.push(tree.add(Link::Entry(c), c.score() as i32, Some(id), None, rank as u32));
                    }
                }
                if let Some(m) = matching {
                    todo.push(tree.add(Link::Entry(m), m.score() as i32, Some(id), Some(id), 0));
                }
            }
        }
        on_hit_path.resize(tree.len(), false);
    }
    Some((tree, on_hit_path))
}

fn mark_path(tree: &Tree, on_hit_path: &mut [bool], mut id: usize) {
    while !on_hit_path[id] {
        on_hit_path[id] = true;
        match tree.nodes[id].up {
            Some(up) => id = up,
            None => return,
        }
    }
}

/// The tree of the paths of candidate strings (mismatches only, against the read's reverse
/// complement `search.seq`, which bwa consumes from its end): a node per string suffix, the
/// read's own base a chain's next entry, any other a chain start ranked as bwa's step pushes
/// mismatches (the read's base plus 1, 2, 3, then 4 for an N, modulo 4).
pub fn candidate_tree(search: &Search, strings: &[Substitutions]) -> Tree {
    let (seq, s_mm) = (search.seq, search.opt.s_mm);
    let mut tree = Tree::new(search.root());
    let mut child_of: HashMap<(usize, u8), usize> = HashMap::new();
    let mut string = seq.to_vec();
    for subs in strings {
        string.copy_from_slice(seq);
        for &(i, b) in subs {
            string[i] = b;
        }
        let mut node = 0;
        for i in (0..seq.len()).rev() {
            let base = string[i];
            node = *child_of.entry((node, base)).or_insert_with(|| {
                let (score, link) = (tree.nodes[node].score, Link::Base { i: i as i32, base });
                if base == seq[i] {
                    tree.add(link, score, Some(node), Some(node), 0)
                } else {
                    let j = match (base + 4 - seq[i]) & 3 {
                        0 => 4,
                        j => j,
                    };
                    tree.add(link, score + s_mm, Some(node), None, j as u32 - 1)
                }
            });
        }
    }
    tree
}

/// What a replay gives: the hits, the entries it stepped (each about one pair of occurrence
/// lookups), and the replayed nodes off the root's chain.
pub struct Replayed {
    pub hits: Vec<AlnHit>,
    pub steps: usize,
    pub off_root_chain: usize,
}

/// bwa's hits of the read from the nodes `members` of `tree`, popped in the ancestry order.
pub fn replay(search: &Search, width: &[Width], opt: &GapOptions, tree: &Tree, members: Vec<usize>) -> Replayed {
    let mut found = HitList::new(opt);
    let mut order = members;
    order.sort_by(|&a, &b| cmp_pop(&tree.nodes, a, b));
    let mut width = width.to_vec();
    let mut entries: Vec<Option<Entry>> = vec![None; tree.len()];
    entries[0] = Some(search.root());
    let mut children = vec![Vec::new(); tree.len()];
    for &i in &order {
        if let Some(up) = tree.nodes[i].up {
            children[up].push(i);
        }
    }
    let mut steps = 0;
    for &id in &order {
        let Some(e) = entries[id] else { continue };
        if found.ends_before(e.score() as i32, opt) {
            break;
        }
        steps += 1;
        let mut pushed = Vec::new();
        match search.step(&e, found.max_diff, &width, &mut |c| pushed.push(c)) {
            Step::Done => {}
            Step::Hit(k, l) => match found.record(&e, k, l, &mut width, search.bwt.seq_len(), opt) {
                AfterHit::Stop => break,
                AfterHit::Go | AfterHit::FirstHit(_) => {}
            },
            Step::Expanded(matching) => {
                pushed.extend(matching);
                for &c in &children[id] {
                    entries[c] = pushed.iter().copied().find(|x| links_to(search, tree.links[c], x));
                }
            }
        }
    }
    let off_root_chain = order.iter().filter(|&&i| tree.nodes[i].start != 0).count();
    Replayed { hits: found.hits, steps, off_root_chain }
}

/// Whether child entry `x` of a step is the node linked by `link`.
fn links_to(search: &Search, link: Link, x: &Entry) -> bool {
    match link {
        Link::Entry(e) => e == *x,
        Link::Base { i, base } => {
            let l2 = search.bwt.l2();
            let c = base as usize;
            x.state == STATE_M && (x.info & 0xffff) as i32 == i && x.k > l2[c] && x.k <= l2[c + 1]
        }
    }
}

/// bwa's hits of the read from its candidate paths, found by the walk, and the entries on those
/// paths (what the replay pops) off the root's chain, or None where the walk outgrew `most`
/// entries. `best` is the best hit's score (bwa's), which bounds the walk.
pub fn replayed_hits(
    search: &Search,
    width: &[Width],
    opt: &GapOptions,
    best: Option<u32>,
    most: usize,
) -> Option<(Vec<AlnHit>, usize)> {
    let Some(best) = best else { return Some((Vec::new(), 0)) };
    if search.too_many_ns(HitList::new(opt).max_diff) {
        return Some((Vec::new(), 0));
    }
    let bound = best as usize + opt.s_mm as usize;
    let (tree, on_hit_path) = walk(search, width, HitList::new(opt).max_diff, bound, most)?;
    let members = (0..tree.len()).filter(|&i| on_hit_path[i]).collect();
    let r = replay(search, width, opt, &tree, members);
    Some((r.hits, r.off_root_chain))
}
