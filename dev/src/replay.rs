//! bwa's hits rebuilt from candidate paths (docs/gpu-search.md, "A way to bwa's order without
//! bwa's search"). The entries on the paths are popped in the ancestry order
//! (dev/src/pop_order.rs) and run through bwa's step and hit rules, children living only where
//! their parent's step still pushes them. The paths come from a depth-first walk of bwa's step
//! rules with the read's first state up to the best score plus `s_mm` ([`replayed_hits`]: what
//! the order and the replay need), or from alignments an enumeration found ([`candidate_tree`],
//! src/search/pigeonhole.rs).

use std::collections::HashMap;

use bcuda::aln_options::aln_score;
use bcuda::sai::{AlnHit, GapOptions};
use bcuda::search::pigeonhole::{Alignment, Col};
use bcuda::search::replay::{reach, Reached};
use bcuda::search::stack::Entry;
use bcuda::search::{AfterHit, HitList, Search, Step, Width};

use crate::pop_order::{cmp_pop, Ancestry};

/// How a node is told among its parent's children: by its entry (the walk knows it), or by
/// the read position it reaches, its gap state and the base it adds to the string (an
/// alignment's node, whose entry is known once its parent is stepped; an insertion adds none).
#[derive(Clone, Copy)]
pub enum Link {
    Entry(Entry),
    Op { i: i32, state: u8, base: Option<u8> },
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

    /// What each node's step waits for: its parent's step, or nothing on the root's chain,
    /// whose intervals the GPU's read_widths computes before the search.
    pub fn waits_for(&self) -> Vec<Option<u32>> {
        self.nodes.iter().map(|n| n.up.filter(|_| n.start != 0).map(|u| u as u32)).collect()
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

/// The tree of the candidate alignments' paths from the root, as bwa's search walks them: the
/// read's reverse complement `search.seq` consumed from its end, a column at a time from the
/// right. The read's own base goes on its parent's chain; any other column starts a chain,
/// ranked as bwa's step pushes: an insertion, the deletions in base order, then the
/// mismatches (the read's base plus 1, 2, 3, then 4 for an N, modulo 4).
pub fn candidate_tree(search: &Search, alignments: &[Alignment]) -> Tree {
    let seq = search.seq;
    let mut tree = Tree::new(search.root());
    let mut reached = vec![Reached { i: seq.len(), ..Reached::default() }];
    let mut child_of: HashMap<(usize, Col), usize> = HashMap::new();
    for alignment in alignments {
        let mut node = 0;
        for &col in alignment.iter().rev() {
            node = *child_of.entry((node, col)).or_insert_with(|| {
                let (r, link, rank) = reach(seq, reached[node], col);
                let link = Link::Op { i: link.i, state: link.state, base: link.base };
                let (score, up) = (aln_score(r.n_mm, r.n_gapo, r.n_gape, search.opt), Some(node));
                reached.push(r);
                match rank {
                    None => tree.add(link, score, up, Some(node), 0),
                    Some(rank) => tree.add(link, score, up, None, rank),
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
        Link::Op { i, state, base } => {
            let l2 = search.bwt.l2();
            let in_base = |c: u8| x.k > l2[c as usize] && x.k <= l2[c as usize + 1];
            x.state == state && (x.info & 0xffff) as i32 == i && base.is_none_or(in_base)
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
