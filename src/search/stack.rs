//! The score-ordered stack of bwa's search (gap_stack_t): one LIFO list per score, popped from
//! the best (lowest) score. Two implementations with the same pop order:
//!
//! - [`GapStack`], bwa's own: it holds every entry (the CPU oracle).
//! - [`BoundedStack`], the stack of the GPU's inexact kernels (cuda/inexact_match.cu mirrors it
//!   line for line): a fixed pool of entries that keeps only the entries the search can still
//!   pop. Entries are popped in score order, so once every entry above some score `cap` is
//!   dropped, the pops up to `cap` are exactly bwa's; a dropped entry is only counted (bwa's
//!   `-m` limit counts it). The cap falls when the first hit fixes the last score bwa will pop
//!   (`best_score + s_mm`), and when the pool is full (the highest score's entries go). If the
//!   search later needs a dropped entry, the stack says so and the read is searched again with
//!   a larger pool (or by the CPU).
//!
//! Why it pays: most of bwa's stack is entries that are never popped (gap branches at score
//! 11 and more, deep mismatch branches of repeats), pushed long before the search ends.

/// A partial alignment: the suffix `seq[i..]` matched with these differences, SA interval [k, l].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// score << 21 | i, as bwa packs it.
    pub info: u32,
    pub n_mm: u8,
    pub n_gapo: u8,
    pub n_gape: u8,
    pub state: u8,
    pub n_ins: u16,
    pub n_del: u16,
    pub last_diff_pos: i32,
    pub k: u64,
    pub l: u64,
}

impl Entry {
    pub fn score(&self) -> usize {
        (self.info >> 21) as usize
    }
}

/// What a pop finds.
pub enum Next {
    Entry(Entry),
    /// No entry is stored, but some were dropped; each scores at least this much.
    Dropped(i32),
    /// The stack's pop budget is spent (the GPU's first pass hands long searches on).
    OutOfPops,
}

/// The stack as the search uses it.
pub trait SearchStack {
    fn reset(&mut self, n_stacks: usize);
    fn push(&mut self, e: Entry);
    /// Called only while `n_entries() > 0`.
    fn pop(&mut self) -> Next;
    /// A pop of the entry the search holds instead of pushing it (the matching child, which
    /// bwa would pop next): it counts against a pop budget; false when the budget is spent.
    fn pop_held(&mut self) -> bool {
        true
    }
    /// Entries held, dropped ones included (bwa's n_entries, for the `-m` limit).
    fn n_entries(&self) -> usize;
    /// The search will pop no entry scoring more than `score`: the stack may drop them.
    fn pop_no_more_than(&mut self, _score: i32) {}
    /// A turn of the search's loop begins, with `n_entries` entries (the held one included, as
    /// bwa's `-m` counts them) and `hits` hits so far. For profiles; the stacks ignore it.
    fn turn(&mut self, _n_entries: usize, _hits: usize) {}
    /// Entry `e`, just popped, passed the search's cut-offs and is stepped now. For profiles;
    /// the stacks ignore it.
    fn expanding(&mut self, _e: &Entry) {}
}

/// bwa's gap_stack_t: every entry is kept.
#[derive(Default)]
pub struct GapStack {
    stacks: Vec<Vec<Entry>>,
    best: usize,
    n_entries: usize,
}

impl SearchStack for GapStack {
    fn reset(&mut self, n_stacks: usize) {
        if self.stacks.len() < n_stacks {
            self.stacks.resize_with(n_stacks, Vec::new);
        }
        self.stacks.truncate(n_stacks);
        self.stacks.iter_mut().for_each(Vec::clear);
        self.best = n_stacks;
        self.n_entries = 0;
    }

    fn push(&mut self, e: Entry) {
        let score = e.score();
        if score >= self.stacks.len() {
            self.stacks.resize_with(score + 1, Vec::new);
        }
        self.stacks[score].push(e);
        self.n_entries += 1;
        self.best = self.best.min(score);
    }

    fn pop(&mut self) -> Next {
        let e = self.stacks[self.best].pop().expect("pop from a non-empty stack");
        self.n_entries -= 1;
        if self.n_entries == 0 {
            self.best = self.stacks.len();
        } else if self.stacks[self.best].is_empty() {
            self.best =
                (self.best + 1..self.stacks.len()).find(|&s| !self.stacks[s].is_empty()).unwrap_or(self.stacks.len());
        }
        Next::Entry(e)
    }

    fn n_entries(&self) -> usize {
        self.n_entries
    }
}

const NO_ENTRY: i32 = -1;

/// A pool of `capacity` entries linked into one LIFO list per score (the GPU's layout), which
/// keeps only entries scoring at most `cap` and counts the others.
/// A bounded stack's pops, entries and lowest score stored ([`BoundedStack::state`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackState {
    pub pops: usize,
    pub entries: usize,
    pub best: usize,
}

pub struct BoundedStack {
    pool: Vec<Entry>,
    next: Vec<i32>,
    heads: Vec<i32>,
    capacity: usize,
    /// Slots handed out so far; freed slots go to `free_list`.
    used: usize,
    free_list: i32,
    stored: usize,
    dropped: usize,
    /// The highest score stored; every dropped entry scores more.
    cap: i32,
    best: usize,
    /// The most entries stored at once since the last reset (for profiles).
    pub peak_stored: usize,
    pops: usize,
    max_pops: usize,
}

impl BoundedStack {
    /// A stack of `capacity` entries that gives up after `max_pops` pops.
    pub fn with_max_pops(capacity: usize, max_pops: usize) -> BoundedStack {
        BoundedStack { max_pops, ..BoundedStack::new(capacity) }
    }

    /// What the stack holds when its search gives up, which is what the GPU's first pass knows
    /// of a read it hands on: its pops (at most `max_pops` + 1), its entries (stored and
    /// dropped) and the lowest score stored.
    pub fn state(&self) -> StackState {
        StackState { pops: self.pops, entries: self.n_entries(), best: self.best }
    }

    pub fn new(capacity: usize) -> BoundedStack {
        BoundedStack {
            pool: vec![Entry::default(); capacity],
            next: vec![NO_ENTRY; capacity],
            heads: Vec::new(),
            capacity,
            used: 0,
            free_list: NO_ENTRY,
            stored: 0,
            dropped: 0,
            cap: i32::MAX,
            best: 0,
            peak_stored: 0,
            pops: 0,
            max_pops: usize::MAX,
        }
    }

    /// Drops every stored entry scoring more than `cap`, and lowers the cap to it.
    fn lower_cap(&mut self, cap: i32) {
        for s in (cap.max(-1) + 1) as usize..self.heads.len() {
            let mut slot = self.heads[s];
            while slot != NO_ENTRY {
                let next = self.next[slot as usize];
                self.next[slot as usize] = self.free_list;
                self.free_list = slot;
                self.stored -= 1;
                self.dropped += 1;
                slot = next;
            }
            self.heads[s] = NO_ENTRY;
        }
        self.cap = cap;
    }

    fn take_slot(&mut self) -> Option<usize> {
        if self.free_list != NO_ENTRY {
            let slot = self.free_list as usize;
            self.free_list = self.next[slot];
            Some(slot)
        } else if self.used < self.capacity {
            self.used += 1;
            Some(self.used - 1)
        } else {
            None
        }
    }
}

impl SearchStack for BoundedStack {
    fn reset(&mut self, n_stacks: usize) {
        self.heads.clear();
        self.heads.resize(n_stacks, NO_ENTRY);
        self.used = 0;
        self.free_list = NO_ENTRY;
        self.stored = 0;
        self.dropped = 0;
        self.cap = n_stacks as i32 - 1;
        self.best = n_stacks;
        self.peak_stored = 0;
        self.pops = 0;
    }

    fn push(&mut self, e: Entry) {
        let score = e.score() as i32;
        if score > self.cap {
            self.dropped += 1;
            return;
        }
        let slot = match self.take_slot() {
            Some(slot) => slot,
            None => {
                // Full: drop the highest score stored (with the new entry if it scores as much).
                let highest = (0..=self.cap)
                    .rev()
                    .find(|&s| self.heads[s as usize] != NO_ENTRY)
                    .expect("a full pool holds entries");
                if score >= highest {
                    self.lower_cap(score - 1);
                    self.dropped += 1;
                    return;
                }
                self.lower_cap(highest - 1);
                self.take_slot().expect("dropping a score frees slots")
            }
        };
        let s = score as usize;
        self.pool[slot] = e;
        self.next[slot] = self.heads[s];
        self.heads[s] = slot as i32;
        self.stored += 1;
        self.peak_stored = self.peak_stored.max(self.stored);
        self.best = self.best.min(s);
    }

    fn pop(&mut self) -> Next {
        if self.stored == 0 {
            return Next::Dropped(self.cap + 1);
        }
        self.pops += 1;
        if self.pops > self.max_pops {
            return Next::OutOfPops;
        }
        // `best` may point at a score emptied by lower_cap.
        while self.heads[self.best] == NO_ENTRY {
            self.best += 1;
        }
        let slot = self.heads[self.best] as usize;
        self.heads[self.best] = self.next[slot];
        self.next[slot] = self.free_list;
        self.free_list = slot as i32;
        self.stored -= 1;
        if self.stored == 0 {
            self.best = self.heads.len();
        } else {
            while self.heads[self.best] == NO_ENTRY {
                self.best += 1;
            }
        }
        Next::Entry(self.pool[slot])
    }

    fn pop_held(&mut self) -> bool {
        self.pops += 1;
        self.pops <= self.max_pops
    }

    fn n_entries(&self) -> usize {
        self.stored + self.dropped
    }

    fn pop_no_more_than(&mut self, score: i32) {
        if score < self.cap {
            self.lower_cap(score);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(score: u32, i: u32) -> Entry {
        Entry { info: score << 21 | i, ..Entry::default() }
    }

    fn pop_info(s: &mut impl SearchStack) -> Option<u32> {
        match s.pop() {
            Next::Entry(e) => Some(e.info),
            Next::Dropped(_) | Next::OutOfPops => None,
        }
    }

    /// Both stacks pop in bwa's order: lowest score first, last in first out within a score.
    #[test]
    fn same_pop_order_while_nothing_is_dropped() {
        let pushes = [(3, 1), (0, 2), (3, 3), (11, 4), (0, 5), (6, 6), (3, 7)];
        let (mut a, mut b) = (GapStack::default(), BoundedStack::new(16));
        a.reset(20);
        b.reset(20);
        for &(s, i) in &pushes {
            a.push(entry(s, i));
            b.push(entry(s, i));
        }
        let mut order = Vec::new();
        while a.n_entries() > 0 {
            let x = pop_info(&mut a);
            assert_eq!(x, pop_info(&mut b));
            order.push(x.unwrap() & 0xffff);
        }
        assert_eq!(order, [5, 2, 7, 3, 1, 6, 4]);
        assert_eq!(b.n_entries(), 0);
    }

    /// A full pool drops its highest score, keeps counting it, and reports it when reached.
    #[test]
    fn a_full_pool_drops_the_highest_score() {
        let mut b = BoundedStack::new(3);
        b.reset(20);
        b.push(entry(0, 1));
        b.push(entry(11, 2));
        b.push(entry(3, 3));
        b.push(entry(3, 4)); // full: score 11 goes
        assert_eq!(b.n_entries(), 4);
        b.push(entry(14, 5)); // above the cap: counted only
        assert_eq!(b.n_entries(), 5);
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(1));
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(4));
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(3));
        match b.pop() {
            Next::Dropped(score) => assert_eq!(score, 11),
            _ => panic!("the dropped entries must not come back"),
        }
    }

    /// A full pool whose highest score is the new entry's drops that score as a whole.
    #[test]
    fn a_new_entry_at_the_highest_score_drops_that_score() {
        let mut b = BoundedStack::new(2);
        b.reset(20);
        b.push(entry(0, 1));
        b.push(entry(3, 2));
        b.push(entry(3, 3));
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(1));
        assert!(matches!(b.pop(), Next::Dropped(3)));
        assert_eq!(b.n_entries(), 2);
    }

    #[test]
    fn a_pop_budget_ends_the_search() {
        let mut b = BoundedStack::with_max_pops(8, 1);
        b.reset(20);
        b.push(entry(0, 1));
        b.push(entry(0, 2));
        assert!(pop_info(&mut b).is_some());
        assert!(matches!(b.pop(), Next::OutOfPops));
    }

    #[test]
    fn pop_no_more_than_drops_the_scores_above() {
        let mut b = BoundedStack::new(8);
        b.reset(20);
        for (s, i) in [(0, 1), (3, 2), (11, 3), (6, 4)] {
            b.push(entry(s, i));
        }
        b.pop_no_more_than(3);
        assert_eq!(b.n_entries(), 4);
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(1));
        assert_eq!(pop_info(&mut b).map(|x| x & 0xffff), Some(2));
        assert!(matches!(b.pop(), Next::Dropped(4)));
    }
}
