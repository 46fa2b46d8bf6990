//! BWA's aln search for one read: the D-array lower bound (bwt_cal_width) and bounded
//! backtracking over the FM-index with a score-ordered stack (bwt_match_gap), so the hits,
//! their order and their count are those of `bwa aln` 0.7.17.
//!
//! Kept as plain loops over fixed-shape state: the GPU inexact kernel is a port of this file.

use bcuda_index::{Bwt, IntervalTable};

mod level_pool;
pub mod level_search;
pub mod m_guard;
pub mod no_hit;
pub mod pigeonhole;
pub mod replay;
pub mod seeded;
pub mod stack;

use crate::aln_options::{aln_score, cal_maxdiff, AVG_ERR};
use crate::sai::{AlnHit, GapOptions, MODE_GAPE, MODE_LOGGAP, MODE_NONSTOP};
use stack::{Entry, GapStack, Next, SearchStack};

/// One entry of the D array: the SA-interval width of a prefix and its lower bound on differences.
#[derive(Clone, Copy, Debug, Default)]
pub struct Width {
    pub w: u64,
    pub bid: i32,
}

/// An entry's gap state: matching (or mismatching) bases, not inside a gap.
pub const STATE_M: u8 = 0;
/// Inside an insertion (read bases the reference lacks).
pub const STATE_I: u8 = 1;
/// Inside a deletion (reference bases the read lacks).
pub const STATE_D: u8 = 2;

/// Per-thread working memory, reused across reads.
#[derive(Default)]
pub struct Scratch {
    pub stack: GapStack,
    pub read: ReadBuffers,
}

/// A read as the search sees it (filled by [`prepare_read`]), in buffers reused across reads.
#[derive(Default)]
pub struct ReadBuffers {
    /// The D array of the whole read (bwt_cal_width).
    pub width: Vec<Width>,
    /// The D array of the seed, when the read is longer than the seed.
    pub seed_width: Vec<Width>,
    /// The read's reverse complement (codes 0-3, 4 for N).
    pub seq: Vec<u8>,
}

/// bwt_cal_width: for each prefix `str[..=i]`, the width of the SA interval of its last exact
/// block and how many blocks (a lower bound on differences) it took.
pub fn cal_width(bwt: &Bwt, s: &[u8], width: &mut [Width]) -> i32 {
    let l2 = bwt.l2();
    let mut bid = 0;
    let (mut k, mut l) = (0u64, bwt.seq_len());
    for (i, &c) in s.iter().enumerate() {
        if c < 4 {
            let (ok, ol) = bwt.occ_pair(k.wrapping_sub(1), l, c);
            k = l2[c as usize] + ok + 1;
            l = l2[c as usize] + ol;
        }
        if k > l || c > 3 {
            k = 0;
            l = bwt.seq_len();
            bid += 1;
        }
        width[i] = Width { w: l.wrapping_sub(k).wrapping_add(1), bid };
    }
    bid += 1;
    width[s.len()] = Width { w: 0, bid };
    bid
}

/// bwt_match_exact_alt: extends [k, l] by `s` backwards; false if it does not occur.
fn extend_exact(bwt: &Bwt, s: &[u8], k: &mut u64, l: &mut u64) -> bool {
    let l2 = bwt.l2();
    let (mut kk, mut ll) = (*k, *l);
    for &c in s.iter().rev() {
        if c > 3 {
            return false;
        }
        let (ok, ol) = bwt.occ_pair(kk.wrapping_sub(1), ll, c);
        kk = l2[c as usize] + ok + 1;
        ll = l2[c as usize] + ol;
        if kk > ll {
            return false;
        }
    }
    *k = kk;
    *l = ll;
    true
}

/// gap_shadow: after a hit, narrows the D array so the same hit is not counted again.
fn shadow(x: u64, max: u64, last_diff_pos: i32, width: &mut [Width]) {
    let mut j = 0u64;
    for w in width.iter_mut().take(last_diff_pos.max(0) as usize) {
        if w.w > x {
            w.w -= x;
        } else if w.w == x {
            w.bid = 1;
            j += 1;
            w.w = max - j;
        }
    }
}

fn int_log2(v: u32) -> i32 {
    31 - v.max(1).leading_zeros() as i32
}

/// Aligns one read (its aligned part, in read orientation) as bwa aln does; `opt` carries the
/// batch's options (see [`crate::aln_options::batch_options`]).
pub fn align_read(bwt: &Bwt, read: &[u8], opt: &GapOptions, scratch: &mut Scratch) -> Vec<AlnHit> {
    match align_read_with(bwt, None, read, opt, &mut scratch.stack, &mut scratch.read) {
        Ok(hits) => hits,
        Err(StackFull) => unreachable!("bwa's stack holds every entry"),
    }
}

/// The search needed an entry its stack had dropped (only a [`stack::BoundedStack`]
/// drops entries): the read must be searched again with a larger one.
#[derive(Debug, PartialEq, Eq)]
pub struct StackFull;

/// [`align_read`] with any stack, and the D arrays and sequence buffers given.
pub fn align_read_with<S: SearchStack>(
    bwt: &Bwt,
    intervals: Option<&IntervalTable>,
    read: &[u8],
    opt: &GapOptions,
    stack: &mut S,
    buffers: &mut ReadBuffers,
) -> Result<Vec<AlnHit>, StackFull> {
    // bwa works on the reversed read for the D arrays, then on its reverse complement.
    let (local, use_seed) = prepare_read(bwt, read, opt, buffers);
    let ReadBuffers { width, seed_width, seq } = buffers;
    let search = Search { bwt, seq, seed_width: use_seed.then_some(&seed_width[..]), opt: &local, intervals };
    match_gap(&search, width, opt, stack, local.max_diff)
}

/// The read's D arrays and reverse complement as bwa prepares them (see [`align_read_with`]),
/// and the read's own options; for searches other than [`match_gap`].
pub fn prepare_read(bwt: &Bwt, read: &[u8], opt: &GapOptions, buffers: &mut ReadBuffers) -> (GapOptions, bool) {
    let ReadBuffers { width, seed_width, seq } = buffers;
    let len = read.len();
    let mut local = *opt;
    seq.clear();
    seq.extend(read.iter().rev());
    width.resize(len + 1, Width::default());
    cal_width(bwt, seq, width);
    if opt.fnr > 0.0 {
        local.max_diff = cal_maxdiff(len as i32, AVG_ERR, opt.fnr as f64);
    }
    let seed_len = opt.seed_len.max(0) as usize;
    local.seed_len = if seed_len < len { opt.seed_len } else { i32::MAX };
    let use_seed = len > seed_len;
    if use_seed {
        seed_width.resize(seed_len + 1, Width::default());
        cal_width(bwt, &seq[len - seed_len..], seed_width);
    }
    for c in seq.iter_mut() {
        *c = if *c > 3 { 4 } else { 3 - *c };
    }
    (local, use_seed)
}

/// The read as the search sees it, and the options: what one step of the search reads.
pub struct Search<'a> {
    pub bwt: &'a Bwt,
    /// The read's reverse complement (codes 0-3, 4 for N).
    pub seq: &'a [u8],
    pub seed_width: Option<&'a [Width]>,
    pub opt: &'a GapOptions,
    /// With a table, an entry matching fewer than its depth bases of the BWT holds the string
    /// it matched in place of `k`, and its extensions come from the table (the GPU's search).
    pub intervals: Option<&'a IntervalTable>,
}

/// An entry's differences: mismatches, gap opens, gap extensions, inserted and deleted bases.
#[derive(Clone, Copy, Default)]
struct Diffs {
    n_mm: u8,
    n_gapo: u8,
    n_gape: u8,
    n_ins: u16,
    n_del: u16,
}

impl Diffs {
    fn of(e: &Entry) -> Diffs {
        Diffs { n_mm: e.n_mm, n_gapo: e.n_gapo, n_gape: e.n_gape, n_ins: e.n_ins, n_del: e.n_del }
    }
}

/// What popping one entry leads to.
pub enum Step {
    /// Nothing more from this entry (pruned, or the rest of the read does not match exactly).
    Done,
    /// A hit: the entry reaches the read's start with SA interval [k, l].
    Hit(u64, u64),
    /// The entry was expanded: its children were pushed, but for the one that matches the
    /// read's next base (bwa pushes it last, so it is popped next), returned here.
    Expanded(Option<Entry>),
}

impl Search<'_> {
    fn gape_counts(&self) -> bool {
        self.opt.mode & MODE_GAPE != 0
    }

    fn new_entry(&self, i: i32, k: u64, l: u64, diffs: Diffs, state: u8, is_diff: bool) -> Entry {
        let Diffs { n_mm, n_gapo, n_gape, n_ins, n_del } = diffs;
        let score = aln_score(n_mm as i32, n_gapo as i32, n_gape as i32, self.opt) as u32;
        Entry {
            info: score << 21 | i as u32,
            n_mm,
            n_gapo,
            n_gape,
            state,
            n_ins,
            n_del,
            last_diff_pos: if is_diff { i } else { 0 },
            k,
            l,
        }
    }

    /// The bases of the BWT entry `e` has matched: the read's bases it consumed, less those it
    /// skipped as insertions, plus those it skipped in the reference as deletions.
    fn matched(&self, e: &Entry) -> u32 {
        (self.seq.len() as i32 - (e.info & 0xffff) as i32 - e.n_ins as i32 + e.n_del as i32) as u32
    }

    /// Whether an entry that matched `matched` bases holds its string in place of `k`.
    fn holds_string(&self, matched: u32) -> bool {
        self.intervals.is_some_and(|t| matched < t.depth())
    }

    /// The intervals of the four one-base extensions of [k, l], with what each child keeps in
    /// place of `k`: its string while it holds one, else its `k`. `string`: the parent's.
    fn extensions(&self, k: u64, l: u64, matched: u32, string: Option<u64>) -> [(u64, u64, u64); 4] {
        match (string, self.intervals) {
            (Some(w), Some(t)) => {
                let kids = t.extensions(matched, w);
                let child_holds = self.holds_string(matched + 1);
                std::array::from_fn(|c| (kids[c].0, kids[c].1, if child_holds { 4 * w + c as u64 } else { kids[c].0 }))
            }
            _ => {
                let l2 = self.bwt.l2();
                let (cnt_k, cnt_l) = self.bwt.occ4_pair(k.wrapping_sub(1), l);
                std::array::from_fn(|c| (l2[c] + cnt_k[c] + 1, l2[c] + cnt_l[c], l2[c] + cnt_k[c] + 1))
            }
        }
    }

    /// Whether the read has more N bases than differences allowed (bwa does not search it).
    pub fn too_many_ns(&self, max_diff: i32) -> bool {
        self.seq.iter().filter(|&&c| c > 3).count() as i32 > max_diff
    }

    /// The entry the search starts from: nothing matched yet.
    pub fn root(&self) -> Entry {
        self.new_entry(self.seq.len() as i32, 0, self.bwt.seq_len(), Diffs::default(), STATE_M, false)
    }

    /// The intervals of the root's chain (the read's exact backward search, as the search runs
    /// it: its matching children one after another): entry `d` is the interval after `d`
    /// bases, until the first base that does not extend it (an N, or an empty interval). The
    /// GPU computes them with the D arrays (read_widths), before the search.
    pub fn root_intervals(&self) -> Vec<(u64, u64)> {
        let (seq, l2) = (self.seq, self.bwt.l2());
        let mut out: Vec<(u64, u64)> = vec![(0, self.bwt.seq_len())];
        for &c in seq.iter().rev() {
            let (k, l) = out[out.len() - 1];
            if c > 3 {
                break;
            }
            let (ok, ol) = self.bwt.occ_pair(k.wrapping_sub(1), l, c);
            let (nk, nl) = (l2[c as usize] + ok + 1, l2[c as usize] + ol);
            if nk > nl {
                break;
            }
            out.push((nk, nl));
        }
        out
    }

    /// The root chain's entry after `d` matched bases with interval [k, l]: what the root's
    /// `d`-th matching child is (with a table, its string in place of `k` while it holds one).
    pub fn root_chain_entry(&self, d: usize, k: u64, l: u64) -> Entry {
        let len = self.seq.len();
        let field = if self.holds_string(d as u32) {
            self.seq[len - d..].iter().rev().fold(0u64, |w, &c| 4 * w + c as u64)
        } else {
            k
        };
        self.new_entry((len - d) as i32, field, l, Diffs::default(), STATE_M, false)
    }

    /// One pop of bwt_match_gap's loop (after its cut-offs): checks entry `e` against the
    /// differences left (`max_diff`) and the D arrays, and expands it, pushing its children in
    /// bwa's order through `push`.
    pub fn step(&self, e: &Entry, max_diff: i32, width: &[Width], push: &mut impl FnMut(Entry)) -> Step {
        let (bwt, seq, opt) = (self.bwt, self.seq, self.opt);
        let len = seq.len() as i32;
        let gape_counts = self.gape_counts();
        let (mut k, mut l) = (e.k, e.l);
        let mut i = (e.info & 0xffff) as i32;
        let matched = self.matched(e);
        let string = self.holds_string(matched).then_some(e.k);
        if let (Some(w), Some(t)) = (string, self.intervals) {
            k = t.interval(matched, w).0;
        }
        let mut m = max_diff - (e.n_mm as i32 + e.n_gapo as i32);
        if gape_counts {
            m -= e.n_gape as i32;
        }
        if m < 0 {
            return Step::Done;
        }
        let mut m_seed = 0;
        if self.seed_width.is_some() {
            m_seed = opt.max_seed_diff - (e.n_mm as i32 + e.n_gapo as i32);
            if gape_counts {
                m_seed -= e.n_gape as i32;
            }
        }
        if i > 0 && m < width[i as usize - 1].bid {
            return Step::Done;
        }

        // A hit: the whole read consumed, or the rest must match exactly.
        if i == 0 {
            return Step::Hit(k, l);
        }
        if m == 0 && (e.state == STATE_M || gape_counts || e.n_gape as i32 == opt.max_gape) {
            return if extend_exact(bwt, &seq[..i as usize], &mut k, &mut l) { Step::Hit(k, l) } else { Step::Done };
        }

        i -= 1;
        let kids = self.extensions(k, l, matched, string);
        let occ = l - k + 1;
        let (mut allow_diff, mut allow_m) = (true, true);
        if i > 0 {
            let iu = i as usize;
            if width[iu - 1].bid > m - 1 {
                allow_diff = false;
            } else if width[iu - 1].bid == m - 1 && width[iu].bid == m - 1 && width[iu - 1].w == width[iu].w {
                allow_m = false;
            }
            let ii = i - (len - opt.seed_len);
            if let (Some(sw), true) = (self.seed_width, ii > 0) {
                let ii = ii as usize;
                if sw[ii - 1].bid > m_seed - 1 {
                    allow_diff = false;
                } else if sw[ii - 1].bid == m_seed - 1 && sw[ii].bid == m_seed - 1 && sw[ii - 1].w == sw[ii].w {
                    allow_m = false;
                }
            }
        }

        if allow_diff {
            self.push_gaps(e, i, (l, occ), &kids, max_diff, push);
        }

        // Mismatches (the read's own base last, so it is popped first).
        let base = seq[i as usize];
        let mut matching = None;
        if allow_diff && allow_m {
            for j in 1..=4u8 {
                let c = ((base + j) & 3) as usize;
                let is_mm = j != 4 || base > 3;
                let (nk, nl, field) = kids[c];
                if nk <= nl {
                    let diffs = Diffs { n_mm: e.n_mm + is_mm as u8, ..Diffs::of(e) };
                    let child = self.new_entry(i, field, nl, diffs, STATE_M, is_mm);
                    if is_mm {
                        push(child);
                    } else {
                        matching = Some(child);
                    }
                }
            }
        } else if base < 4 {
            let (nk, nl, field) = kids[base as usize];
            if nk <= nl {
                matching = Some(self.new_entry(i, field, nl, Diffs::of(e), STATE_M, false));
            }
        }
        Step::Expanded(matching)
    }

    /// bwt_match_gap's gap branches of entry `e` at read position `i` (already stepped): a
    /// gap open or extension, an insertion or a deletion per child interval in `kids`; `l` and
    /// `occ` are the entry's interval end and size.
    fn push_gaps(
        &self,
        e: &Entry,
        i: i32,
        (l, occ): (u64, u64),
        kids: &[(u64, u64, u64); 4],
        max_diff: i32,
        push: &mut impl FnMut(Entry),
    ) {
        let (opt, len) = (self.opt, self.seq.len() as i32);
        let gaps = if opt.mode & MODE_LOGGAP != 0 {
            int_log2((e.n_gape + e.n_gapo) as u32) / 2 + 1
        } else {
            e.n_gapo as i32 + e.n_gape as i32
        };
        // A deletion per child interval, with these gap counts, in bwa's order.
        let push_deletions = |n_gapo: u8, n_gape: u8, push: &mut dyn FnMut(Entry)| {
            for &(nk, nl, field) in kids {
                if nk <= nl {
                    let diffs = Diffs { n_gapo, n_gape, n_del: e.n_del + 1, ..Diffs::of(e) };
                    push(self.new_entry(i + 1, field, nl, diffs, STATE_D, true));
                }
            }
        };
        if i >= opt.indel_end_skip + gaps && len - i >= opt.indel_end_skip + gaps {
            match e.state {
                STATE_M if (e.n_gapo as i32) < opt.max_gapo => {
                    let diffs = Diffs { n_gapo: e.n_gapo + 1, n_ins: e.n_ins + 1, ..Diffs::of(e) };
                    push(self.new_entry(i, e.k, l, diffs, STATE_I, true));
                    push_deletions(e.n_gapo + 1, e.n_gape, push);
                }
                STATE_I if (e.n_gape as i32) < opt.max_gape => {
                    let diffs = Diffs { n_gape: e.n_gape + 1, n_ins: e.n_ins + 1, ..Diffs::of(e) };
                    push(self.new_entry(i, e.k, l, diffs, STATE_I, true));
                }
                STATE_D
                    if (e.n_gape as i32) < opt.max_gape
                        && ((e.n_gape as i32 + e.n_gapo as i32) < max_diff || occ < opt.max_del_occ as u64) =>
                {
                    push_deletions(e.n_gapo, e.n_gape + 1, push);
                }
                _ => {}
            }
        }
    }
}

/// The hits found so far and the cut-offs they set (bwt_match_gap's best_score, best_cnt and
/// max_diff).
pub struct HitList {
    pub hits: Vec<AlnHit>,
    pub best_score: i32,
    pub best_cnt: i32,
    pub max_diff: i32,
}

/// What recording a hit leads to.
pub enum AfterHit {
    Go,
    /// The first hit: bwa pops no entry scoring more than this from now on.
    FirstHit(i32),
    /// A worse hit after too many best ones (`-R`): the search ends.
    Stop,
}

impl HitList {
    pub fn new(opt: &GapOptions) -> HitList {
        HitList {
            hits: Vec::new(),
            best_score: aln_score(opt.max_diff + 1, opt.max_gapo + 1, opt.max_gape + 1, opt),
            best_cnt: 0,
            max_diff: opt.max_diff,
        }
    }

    /// Records entry `e`'s hit [k, l], and narrows the D array as bwa's gap_shadow does.
    pub fn record(
        &mut self,
        e: &Entry,
        k: u64,
        l: u64,
        width: &mut [Width],
        seq_len: u64,
        opt: &GapOptions,
    ) -> AfterHit {
        let gape_counts = opt.mode & MODE_GAPE != 0;
        let score = aln_score(e.n_mm as i32, e.n_gapo as i32, e.n_gape as i32, opt);
        let mut after = AfterHit::Go;
        if self.hits.is_empty() {
            self.best_score = score;
            let mut best_diff = e.n_mm as i32 + e.n_gapo as i32;
            if gape_counts {
                best_diff += e.n_gape as i32;
            }
            if opt.mode & MODE_NONSTOP == 0 {
                self.max_diff = if best_diff + 1 > opt.max_diff { opt.max_diff } else { best_diff + 1 };
                after = AfterHit::FirstHit(self.best_score + opt.s_mm);
            }
        }
        if score == self.best_score {
            self.best_cnt = self.best_cnt.wrapping_add((l - k + 1) as i32);
        } else if self.best_cnt > opt.max_top2 {
            return AfterHit::Stop;
        }
        // A gap in a tandem repeat can reach the same interval twice.
        let seen = e.n_gapo > 0 && self.hits.iter().any(|h| h.k == k && h.l == l);
        if !seen {
            shadow(l - k + 1, seq_len, e.last_diff_pos, width);
            self.hits.push(AlnHit {
                n_mm: e.n_mm,
                n_gapo: e.n_gapo,
                n_gape: e.n_gape,
                score: score as u32,
                n_ins: e.n_ins,
                n_del: e.n_del,
                k,
                l,
            });
        }
        after
    }

    /// Whether bwa's search ends before popping an entry of this score (its `best_score + s_mm`
    /// cut-off; never with `-N`).
    pub fn ends_before(&self, score: i32, opt: &GapOptions) -> bool {
        opt.mode & MODE_NONSTOP == 0 && score > self.best_score + opt.s_mm
    }
}

/// Stack scores of a batch (bwa sizes its gap stack by the batch's options).
pub fn n_stacks(batch_opt: &GapOptions) -> usize {
    aln_score(batch_opt.max_diff + 1, batch_opt.max_gapo + 1, batch_opt.max_gape + 1, batch_opt).max(1) as usize
}

/// bwt_match_gap: best-first search of `seq` (the read's reverse complement) allowing
/// mismatches and gaps within `opt`'s limits. `batch_opt` sizes the stack as bwa does.
/// `max_diff`: the differences allowed until the first hit (bwa's: `search.opt.max_diff`);
/// the first hit's cut-off stays bwa's, `min(d* + 1, search.opt.max_diff)`.
///
/// Public so that profiles (`bcuda-dev prune-bound`) run this very search, with a lower
/// starting bound and a stack that watches it through [`SearchStack`]'s hooks.
pub fn match_gap<S: SearchStack>(
    search: &Search,
    width: &mut [Width],
    batch_opt: &GapOptions,
    stack: &mut S,
    max_diff: i32,
) -> Result<Vec<AlnHit>, StackFull> {
    let (bwt, opt) = (search.bwt, search.opt);
    let mut found = HitList::new(opt);
    found.max_diff = max_diff;
    if search.too_many_ns(found.max_diff) {
        return Ok(found.hits);
    }
    stack.reset(n_stacks(batch_opt));
    stack.push(search.root());
    // The matching child of the last pop is held, not pushed: bwa pushes it last at its
    // parent's score, the lowest stored, so it is the next pop (its -m still counts it).
    let mut held: Option<Entry> = None;
    loop {
        let n_entries = stack.n_entries() + held.is_some() as usize;
        if n_entries == 0 {
            break;
        }
        stack.turn(n_entries, found.hits.len());
        if n_entries > opt.max_entries as usize {
            break;
        }
        let e = match held.take() {
            Some(e) if stack.pop_held() => e,
            Some(_) => return Err(StackFull),
            None => match stack.pop() {
                Next::Entry(e) => e,
                // bwa would pop a dropped entry: fine if that ends the search, as it would.
                Next::Dropped(score) if found.ends_before(score, opt) => break,
                Next::Dropped(_) | Next::OutOfPops => return Err(StackFull),
            },
        };
        if found.ends_before(e.score() as i32, opt) {
            break;
        }
        stack.expanding(&e);
        match search.step(&e, found.max_diff, width, &mut |child| stack.push(child)) {
            Step::Done => {}
            Step::Hit(k, l) => match found.record(&e, k, l, width, bwt.seq_len(), opt) {
                AfterHit::Go => {}
                AfterHit::FirstHit(last_score) => stack.pop_no_more_than(last_score),
                AfterHit::Stop => break,
            },
            Step::Expanded(matching) => held = matching,
        }
    }
    Ok(found.hits)
}
