//! The level search's store of entries: each score's list in push order, in chunks of a fixed
//! pool (the model of the `Levels` of cuda/inexact_match.cu). The pool counts chunks of items;
//! bwa's `-m` counts entries, stored and dropped.
//!
//! An item is one entry or, with gap records, the gap children that one pop pushed (an
//! insertion and a deletion per child interval, or a gap's extension: all of one score). A
//! record stands in its children's place in the score's list and is expanded only when the
//! search reaches that score, so bwa's order is kept; most records are never expanded, since
//! most gap children score above the last score bwa pops.

use super::stack::Entry;
use super::STATE_M;

/// Items per chunk of the pool.
pub const CHUNK: usize = 64;

/// What a score's list holds.
#[derive(Clone, Debug)]
pub(super) enum Item {
    One(Entry),
    /// A pop's gap children, in push order.
    Gaps(Vec<Entry>),
}

impl Item {
    fn score(&self) -> usize {
        match self {
            Item::One(e) => e.score(),
            Item::Gaps(children) => children[0].score(),
        }
    }

    fn entries(&self) -> usize {
        match self {
            Item::One(_) => 1,
            Item::Gaps(children) => children.len(),
        }
    }
}

/// A run's pushes, `pushes_at[p]` of them by its pop `p`, pop by pop.
pub(super) fn by_pop<'a>(pushes: &'a [Entry], pushes_at: &'a [usize]) -> impl Iterator<Item = &'a [Entry]> {
    pushes_at.iter().scan(0, move |first, &n| {
        let pop = &pushes[*first..*first + n];
        *first += n;
        Some(pop)
    })
}

/// How many of a pop's pushes are gap children: step pushes them before its mismatches.
pub(super) fn gap_children(pop: &[Entry]) -> usize {
    pop.iter().take_while(|e| e.state != STATE_M).count()
}

/// A run's pushes (`pushes_at[p]` of them by its pop `p`) as items: with `records`, each pop's
/// gap children as one.
pub(super) fn items_of(pushes: &[Entry], pushes_at: &[usize], records: bool) -> Vec<Item> {
    if !records {
        return pushes.iter().map(|&e| Item::One(e)).collect();
    }
    let mut items = Vec::new();
    for pop in by_pop(pushes, pushes_at) {
        let gaps = gap_children(pop);
        if gaps > 0 {
            items.push(Item::Gaps(pop[..gaps].to_vec()));
        }
        items.extend(pop[gaps..].iter().map(|&e| Item::One(e)));
    }
    items
}

/// The items of each score in push order, in a pool of chunks.
pub(super) struct Levels {
    buckets: Vec<Vec<Item>>,
    pub free_chunks: usize,
    /// Highest score stored; every dropped entry scores more.
    pub cap: usize,
    /// Entries stored (a record counts its children) and dropped: what `-m` counts.
    pub stored: usize,
    pub dropped: usize,
    /// Records stored and expanded (the GPU looks up each expanded one's intervals).
    pub records: usize,
    pub expanded: usize,
}

impl Levels {
    pub fn new(scores: usize, chunks: usize) -> Levels {
        let buckets = vec![Vec::new(); scores];
        Levels { buckets, free_chunks: chunks, cap: scores - 1, stored: 0, dropped: 0, records: 0, expanded: 0 }
    }

    pub fn chunks_of(len: usize) -> usize {
        len.div_ceil(CHUNK)
    }

    /// The lowest score up to the cap with items.
    pub fn lowest(&self) -> Option<usize> {
        (0..=self.cap).find(|&b| !self.buckets[b].is_empty())
    }

    /// Drops the items of every score above `cap`, freeing their chunks.
    pub fn lower_cap(&mut self, cap: usize) {
        for b in cap + 1..=self.cap.min(self.buckets.len() - 1) {
            let entries: usize = self.buckets[b].iter().map(Item::entries).sum();
            self.free_chunks += Self::chunks_of(self.buckets[b].len());
            self.stored -= entries;
            self.dropped += entries;
            self.buckets[b].clear();
        }
        self.cap = self.cap.min(cap);
    }

    /// Drops the highest scores above `level` until `need` chunks are free (or none is left).
    fn make_room(&mut self, level: usize, need: usize) {
        while self.free_chunks < need && self.cap > level {
            match (level + 1..=self.cap).rev().find(|&b| !self.buckets[b].is_empty()) {
                Some(highest) => self.lower_cap(highest - 1),
                None => self.lower_cap(level),
            }
        }
    }

    /// The items up to the cap; those above it are counted as dropped.
    pub fn count_above_cap(&mut self, items: Vec<Item>) -> Vec<Item> {
        let (kept, above): (Vec<Item>, Vec<Item>) = items.into_iter().partition(|x| x.score() <= self.cap);
        self.dropped += above.iter().map(Item::entries).sum::<usize>();
        kept
    }

    /// Stores a group's items (each lane's in order, lane after lane) while the current level
    /// is `level`: first makes room for them, dropping the highest scores if the pool is short.
    pub fn commit(&mut self, level: usize, lanes: Vec<Vec<Item>>) {
        // Chunks the items may need: whole chunks for them, plus one part-filled chunk per
        // score (as the GPU reserves them, without counting per score).
        let need = lanes.iter().map(Vec::len).sum::<usize>().div_ceil(CHUNK) + self.buckets.len();
        self.make_room(level, need);
        for item in lanes.into_iter().flatten() {
            let s = item.score();
            if s > self.cap {
                self.dropped += item.entries();
                continue;
            }
            let before = Self::chunks_of(self.buckets[s].len());
            self.stored += item.entries();
            self.records += usize::from(matches!(item, Item::Gaps(_)));
            self.buckets[s].push(item);
            self.free_chunks -= Self::chunks_of(self.buckets[s].len()) - before;
        }
    }

    /// The level's chains, last pushed first, its records expanded in their place; the level
    /// then holds the chunks of its entries. None where the pool cannot hold them even with
    /// every score above the level dropped.
    pub fn open(&mut self, level: usize) -> Option<Vec<Entry>> {
        let items = &self.buckets[level];
        let records = items.iter().filter(|x| matches!(x, Item::Gaps(_))).count();
        let mut chains = Vec::with_capacity(items.iter().map(Item::entries).sum());
        for item in items {
            match item {
                Item::One(e) => chains.push(*e),
                Item::Gaps(children) => chains.extend_from_slice(children),
            }
        }
        chains.reverse();
        if records > 0 {
            self.free_chunks += Self::chunks_of(self.buckets[level].len());
            let need = Self::chunks_of(chains.len());
            self.make_room(level, need);
            if self.free_chunks < need {
                return None;
            }
            self.free_chunks -= need;
            self.expanded += records;
        }
        Some(chains)
    }

    /// The level is done: its items are gone (their chunks went back as its chains were taken).
    pub fn close(&mut self, level: usize) {
        self.buckets[level].clear();
    }
}
