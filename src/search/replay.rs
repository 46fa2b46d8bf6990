//! bwa's hits rebuilt from candidate alignments (docs/gpu-search.md, "A way to bwa's order
//! without bwa's search"), in the form a GPU thread runs: the alignments' paths from the root,
//! as bwa's search walks them, make a tree of flat arrays; then bwa's own search runs with its
//! stack, but a child is kept only where the tree has it.
//!
//! Why a filtered search gives bwa's hits: a tree node's ancestors are tree nodes, so the
//! entries kept depend only on entries kept, and bwa's stack pops them in the same relative
//! order (lowest score first, last in first out) with or without the others. Every hit bwa
//! records is an alignment within the last budget, so its path is in the tree, and the hits
//! alone change the cut-offs (`max_diff`, the shadowed D array, `-R`). bwa's `-m` counts all
//! the entries, which the tree does not hold: a read that may reach it is not for this.

use crate::sai::{AlnHit, GapOptions};
use crate::search::pigeonhole::{Alignment, Col};
use crate::search::stack::Entry;
use crate::search::{n_stacks, AfterHit, HitList, Search, Step, Width, STATE_D, STATE_I, STATE_M};

/// How bwa's search tells a node among its parent's children: the read position it reaches,
/// its gap state and the base it adds to the string (None for an insertion, which adds none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub i: i32,
    pub state: u8,
    pub base: Option<u8>,
}

/// A node as bwa's search reaches it: read bases left, gap state and differences.
#[derive(Clone, Copy, Default)]
pub struct Reached {
    pub i: usize,
    pub state: u8,
    pub n_mm: i32,
    pub n_gapo: i32,
    pub n_gape: i32,
}

/// Where column `col` takes bwa's search from `from` on `seq` (the read's reverse complement,
/// consumed from its end), its link, and its rank among the parent's pushes as bwa's step makes
/// them (None: the matching child, popped at once; then the insertion, the deletions by base,
/// the mismatches).
pub fn reach(seq: &[u8], from: Reached, col: Col) -> (Reached, Link, Option<u32>) {
    let gap = |open: bool| if open { (1, 0) } else { (0, 1) };
    match col {
        Col::Base(b) => {
            let i = from.i - 1;
            let r = Reached { i, state: STATE_M, n_mm: from.n_mm + (b != seq[i]) as i32, ..from };
            let j = match (b + 4 - seq[i]) & 3 {
                0 => 4,
                j => j,
            };
            (r, Link { i: i as i32, state: STATE_M, base: Some(b) }, (b != seq[i]).then_some(4 + j as u32))
        }
        Col::Ins => {
            let (o, e) = gap(from.state != STATE_I);
            let r = Reached { i: from.i - 1, state: STATE_I, n_gapo: from.n_gapo + o, n_gape: from.n_gape + e, ..from };
            (r, Link { i: r.i as i32, state: STATE_I, base: None }, Some(0))
        }
        Col::Del(b) => {
            let (o, e) = gap(from.state != STATE_D);
            let r = Reached { state: STATE_D, n_gapo: from.n_gapo + o, n_gape: from.n_gape + e, ..from };
            (r, Link { i: r.i as i32, state: STATE_D, base: Some(b) }, Some(1 + b as u32))
        }
    }
}

const NONE: u32 = u32::MAX;

/// The alignments' paths from the root as flat arrays: each node's link, first child and next
/// sibling (node 0 is the root).
pub struct CandidateTree {
    links: Vec<Link>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
}

impl CandidateTree {
    /// The tree of `alignments` (columns left to right) of `seq`, each walked from its last
    /// column as bwa's search walks it.
    pub fn new(seq: &[u8], alignments: &[Alignment]) -> CandidateTree {
        let root = Link { i: seq.len() as i32, state: STATE_M, base: None };
        let mut tree = CandidateTree { links: vec![root], first_child: vec![NONE], next_sibling: vec![NONE] };
        let mut reached = vec![Reached { i: seq.len(), ..Reached::default() }];
        for alignment in alignments {
            let mut node = 0;
            for &col in alignment.iter().rev() {
                let (r, link, _) = reach(seq, reached[node as usize], col);
                node = tree.child_or_new(node, link, || reached.push(r));
            }
        }
        tree
    }

    /// The tree as flat arrays built elsewhere (cuda/candidates.cu's candidate_tree): node 0
    /// the root, each node's link, first child and next sibling (`u32::MAX`: none).
    pub fn from_arrays(links: Vec<Link>, first_child: Vec<u32>, next_sibling: Vec<u32>) -> CandidateTree {
        assert!(
            links.len() == first_child.len() && links.len() == next_sibling.len(),
            "a tree's arrays of different lengths"
        );
        CandidateTree { links, first_child, next_sibling }
    }

    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// `parent`'s child linked by `link`, added (and `added` called) if it is new.
    fn child_or_new(&mut self, parent: u32, link: Link, added: impl FnOnce()) -> u32 {
        let mut c = self.first_child[parent as usize];
        while c != NONE {
            if self.links[c as usize] == link {
                return c;
            }
            c = self.next_sibling[c as usize];
        }
        let id = self.links.len() as u32;
        self.links.push(link);
        self.first_child.push(NONE);
        self.next_sibling.push(self.first_child[parent as usize]);
        self.first_child[parent as usize] = id;
        added();
        id
    }

    /// The child of `parent` that bwa's entry `x` (a child of the parent's entry) is, if any.
    fn child_for(&self, parent: u32, x: &Entry, l2: &[u64; 5]) -> Option<u32> {
        let in_base = |c: u8| x.k > l2[c as usize] && x.k <= l2[c as usize + 1];
        let mut c = self.first_child[parent as usize];
        while c != NONE {
            let link = self.links[c as usize];
            if x.state == link.state && (x.info & 0xffff) as i32 == link.i && link.base.is_none_or(in_base) {
                return Some(c);
            }
            c = self.next_sibling[c as usize];
        }
        None
    }
}

/// bwa's hits of the read from `tree`: bwa's search (its step, hit rules and stack order), each
/// expanded entry keeping only the children the tree has; the entries stepped are counted in
/// `steps`.
pub fn replay(
    search: &Search,
    width: &[Width],
    opt: &GapOptions,
    tree: &CandidateTree,
    steps: &mut u64,
) -> Vec<AlnHit> {
    let mut found = HitList::new(opt);
    if search.too_many_ns(found.max_diff) {
        return found.hits;
    }
    let (mut width, l2) = (width.to_vec(), search.bwt.l2());
    // One last-in-first-out list a score; the matching child is popped at once, as in bwa.
    let mut stacks: Vec<Vec<(Entry, u32)>> = vec![Vec::new(); n_stacks(opt) + 1];
    let mut held = Some((search.root(), 0u32));
    let mut pushed = Vec::new();
    while let Some((e, node)) = held.take().or_else(|| stacks.iter_mut().find_map(|s| s.pop())) {
        if found.ends_before(e.score() as i32, opt) {
            break;
        }
        *steps += 1;
        pushed.clear();
        match search.step(&e, found.max_diff, &width, &mut |c| pushed.push(c)) {
            Step::Done => {}
            Step::Hit(k, l) => match found.record(&e, k, l, &mut width, search.bwt.seq_len(), opt) {
                AfterHit::Stop => break,
                AfterHit::Go | AfterHit::FirstHit(_) => {}
            },
            Step::Expanded(matching) => {
                for c in &pushed {
                    if let Some(n) = tree.child_for(node, c, &l2) {
                        let score = c.score().min(stacks.len() - 1);
                        stacks[score].push((*c, n));
                    }
                }
                held = matching.and_then(|m| tree.child_for(node, &m, &l2).map(|n| (m, n)));
            }
        }
    }
    found.hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aln_options::batch_options;
    use crate::search::no_hit::bounds;
    use crate::search::pigeonhole::{within, Budget};
    use crate::search::seeded::{both_strands, genome_with_repeats, indexed, read_with_edits, xorshift};
    use crate::search::stack::GapStack;
    use crate::search::{align_read_with, prepare_read, ReadBuffers};

    /// The alignments within bwa's best score plus a mismatch, filtered through bwa's search,
    /// give bwa's hits: reads with mismatches, gaps, N bases and repeats, with one gap open
    /// allowed (bwa's default) and with two (ancient DNA's `-o 2`).
    #[test]
    fn the_filtered_search_gives_bwas_hits() {
        let dir = tempfile::tempdir().unwrap();
        let mut next = xorshift(0x7e91_a5ed_0c4d_2b13);
        let genome = genome_with_repeats(8000, 200..500, &[2000, 4000, 6000], &mut next);
        let (_, bwt) = indexed(dir.path(), &genome);
        let text = both_strands(&genome);
        let (mut with_hits, mut inexact, mut gapped) = (0, 0, 0);
        for r in 0..300 {
            let len = 25 + (next() % 60) as usize;
            let read = read_with_edits(&text, len, r % 7 == 0, 4, &mut next);
            let options = GapOptions { max_gapo: 1 + r % 2, ..GapOptions::default() };
            let opt = batch_options(&options, read.len());
            let mut buffers = ReadBuffers::default();
            let bwa = align_read_with(&bwt, None, &read, &opt, &mut GapStack::default(), &mut buffers).unwrap();
            let Some(best) = bwa.first().map(|h| h.score) else { continue };
            let (local, use_seed) = prepare_read(&bwt, &read, &opt, &mut buffers);
            let ReadBuffers { width, seed_width, seq } = &buffers;
            let search = Search {
                bwt: &bwt,
                seq,
                seed_width: use_seed.then_some(&seed_width[..]),
                opt: &local,
                intervals: None,
            };
            let budget = Budget {
                score: best + local.s_mm as u32,
                s_mm: local.s_mm as u32,
                s_gapo: local.s_gapo as u32,
                s_gape: local.s_gape as u32,
                max_gapo: local.max_gapo as u32,
                max_edits: local.max_diff.max(0) as u32,
            };
            let Some((alignments, _, _)) = within(&bwt, seq, budget, &bounds(&bwt, seq, &mut 0), 32) else { continue };
            let tree = CandidateTree::new(seq, &alignments);
            let hits = replay(&search, width, &local, &tree, &mut 0);
            assert_eq!(hits, bwa, "read {r}: {read:?}");
            with_hits += 1;
            inexact += usize::from(best > 0);
            gapped += usize::from(bwa.iter().any(|h| h.n_gapo > 0));
        }
        assert!(
            with_hits > 150 && inexact > 100 && gapped > 50,
            "{with_hits} reads with hits, {inexact} inexact, {gapped} gapped"
        );
    }
}
