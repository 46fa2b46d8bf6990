// m_guard: the -m guard's bound on bwa's stack, for a read searched from the start with the
// difference bound its first hit sets (g = d* + 1), computed at the end of the read's rung. A
// port of src/search/m_guard.rs (entries_bound and counted_bound; it says why the bound holds),
// bit for bit: dev/tests/m_guard_kernel.rs checks the two on every read. The team passes compiled
// with the rungs (inexact_match.cu, `rung_guard_proves`) call it as a read's rung ends.
//
// bwa's stack never holds more than 1 + 8 x its pops that push: the bounded search's pops, and
// the descendants of the entry points (the children bwa's step pushes with the full limit at the
// pops before the first hit and the bounded step does not). The search kernel counts the entry
// points in the read's scratch as it pops (MGuardCounts); here their descendants that push are
// bounded position by position from those counts and the read's D arrays, with no lookup.
//
// A team a read (MGuardTeam: its lanes share the positions; one thread is a team of one), with
// no heap: three arrays of len + 2 u64 of the caller's and a row of len + 2 a lane
// (MGuardScratch). The model's caps are a (len + 1)² table, so each lane computes the row a
// position needs where it needs it: O(levels x len² x D arrays) in all, over the lanes. Its
// types are bwt.cuh's, which NVRTC compiles before every kernel.

// read_widths' packing of a D array's cell (inexact_match.cu): the width under 2^48, bid above.
#ifndef WIDTH_BID_SHIFT
#define WIDTH_BID_SHIFT 48
#endif

#define M_GUARD_MAX (~0ULL)
// The kinds of gap chains, the rows of MGuardCounts::gap.
#define M_GUARD_INSERTION 0
#define M_GUARD_DELETION 1

// A D array (bwt_cal_width's widths) of the read's bases from read position `start` on, `n`
// cells packed as read_widths packs them. Its cells are the widths as computed: the search's
// own copy of the read's D array is narrowed at each hit, and the bound needs it unchanged.
struct MGuardDArray {
    const u64 *cells;
    int start, n;
};

// The entry points as the search kernel counts them (EntryCounts in the model):
//   mm[n * (len + 1) + p]: of n mismatches and no gap, at read position p (n from 0 to
//     levels - 1; a kernel keeps fewer levels than full + 1 where no more can push, and the
//     bound refuses a read whose uncounted levels could);
//   gap[kind * (len + 1) + p]: of one gap open and nothing else, the heads of gap chains
//     (kind M_GUARD_INSERTION or M_GUARD_DELETION); each scores s_gapo;
//   other_gap_score: the lowest score of the other gap entry points (~0u: none); only whether
//     one of them pops matters.
struct MGuardCounts {
    const u32 *mm, *gap;
    u32 other_gap_score;
    int levels;
};

// A read at its rung's end: as the search sees it (the reverse complement, 4 for N), its entry
// points, and what the bounded search found: its pops, its best hit's score, and d*.
struct MGuardRead {
    const u8 *seq;
    int len;
    MGuardCounts counts;
    u64 bounded_pops;
    int best_score, d_star;
};

// The options the bound reads: bwa's penalties and -m, the read's own max_diff, and -N.
struct MGuardOpt {
    int s_mm, s_gapo, s_gape, max_entries, full;
    bool nonstop;
};

// The caller's scratch: three arrays of len + 2 cells, and a row of len + 2 a lane from caps.
struct MGuardScratch {
    u64 *floor, *born, *alive, *caps;
};

// The threads that compute a bound together: lane `lane` of `lanes` takes positions lane,
// lane + lanes, ...; all of a block's threads call the functions below (those past `lanes`
// only wait at the barriers).
struct MGuardTeam {
    int lane, lanes;
};

// Saturating u64 arithmetic, as the model's: a saturated count stays the largest.
__device__ __forceinline__ u64 m_guard_add(u64 a, u64 b) { return a + b < a ? M_GUARD_MAX : a + b; }
__device__ __forceinline__ u64 m_guard_mul(u64 a, u64 b) { return b != 0 && a > M_GUARD_MAX / b ? M_GUARD_MAX : a * b; }
__device__ __forceinline__ u64 m_guard_min(u64 a, u64 b) { return a < b ? a : b; }

// Where a walk of a D array's cells is: the start of the block the next cell is in, and the
// blocks that did not occur so far (the bid).
struct MGuardBlocks {
    int start, bid;
};

// Cell x of `d` (the walk at x, block_prefixes in the model): its block's start, and whether
// the block occurred up to it, then with `count` its prefix's occurrences (its width). A cell
// whose bid rises ends a block that did not occur; the next block starts above it.
__device__ __forceinline__ bool m_guard_prefix(const MGuardDArray &d, int x, MGuardBlocks &walk, int &block_start, u64 &count)
{
    u64 cell = d.cells[x];
    int bid = (int)(cell >> WIDTH_BID_SHIFT);
    block_start = walk.start;
    if (bid > walk.bid) {
        walk.bid = bid;
        walk.start = d.start + x + 1;
        return false;
    }
    count = cell & ((1ULL << WIDTH_BID_SHIFT) - 1);
    return true;
}

// floor[i] for i from 0 to len: the lowest position a chain of matching children from i can
// reach. The read's bases below it would have to occur, and do not once they hold a whole block
// of the read's D array that did not occur: one above the start of the last such block ending
// below i (0 when none does).
__device__ void m_guard_chain_floor(const MGuardDArray &read_d, int len, u64 *floor)
{
    MGuardBlocks walk = {0, 0};
    u64 lowest = 0;
    for (int x = 0; x < len; ++x) {
        floor[x] = lowest;
        int block_start;
        u64 count;
        if (!m_guard_prefix(read_d, x, walk, block_start, count)) lowest = block_start + 1;
    }
    floor[len] = lowest;
}

// Row i of the caps (caps_row): row[p] for p from i to len, the fewest occurrences of a block
// prefix lying between i and p (starting at i or above, ending below p; M_GUARD_MAX where none
// does). Strings alive at i that were born at p all hold that prefix at the same place, so
// distinct strings take distinct occurrences of it. Only the D arrays' block prefixes have
// known counts.
__device__ void m_guard_caps_row(const MGuardDArray *d, int n_d, int len, int i, u64 *row)
{
    for (int p = i; p <= len; ++p) row[p] = M_GUARD_MAX;
    // First, at x + 1, the fewest occurrences of a prefix that ends at x and starts at i or above.
    for (int j = 0; j < n_d; ++j) {
        MGuardBlocks walk = {d[j].start, 0};
        for (int x = 0; x < d[j].n; ++x) {
            int at = d[j].start + x, block_start;
            u64 count;
            bool occurs = m_guard_prefix(d[j], x, walk, block_start, count);
            if (occurs && at < len && block_start >= i) row[at + 1] = m_guard_min(row[at + 1], count);
        }
    }
    for (int p = i; p < len; ++p) row[p + 1] = m_guard_min(row[p + 1], row[p]);
}

// The strings alive at each position i (alive_strings) into s.alive (alive[len + 1] = 0): those
// born at or above i (born[p] at p) whose chains reach i, capped by the block prefixes between
// i and where they were born. Returns their sum (to every lane; a saturating sum is the same
// in any order).
__device__ u64 m_guard_alive(const u64 *born, const MGuardDArray *d, int n_d, int len, const MGuardScratch &s, const MGuardTeam &t)
{
    u64 *caps = s.caps + (u64)t.lane * (len + 2);
    for (int i = t.lane; i <= len && t.lane < t.lanes; i += t.lanes) {
        m_guard_caps_row(d, n_d, len, i, caps);
        u64 strings = 0;
        for (int p = len; p >= i; --p) {
            if (s.floor[p] <= (u64)i) strings = m_guard_add(strings, born[p]);
            strings = m_guard_min(strings, caps[p]);
        }
        s.alive[i] = strings;
    }
    if (t.lane == 0) s.alive[len + 1] = 0;
    __syncthreads();
    u64 total = 0;
    for (int i = 0; i <= len; ++i) total = m_guard_add(total, s.alive[i]);
    return total;
}

// Which entries can push children (Pushes in the model).
struct MGuardPushes {
    int best_score, last_score, full, after, s_mm;
    bool gaps_pop;
};

__device__ __forceinline__ MGuardPushes m_guard_pushes(const MGuardRead &r, const MGuardOpt &opt)
{
    MGuardPushes q;
    q.best_score = r.best_score;
    // bwa pops nothing scoring more than best + s_mm after its first hit.
    q.last_score = r.best_score + opt.s_mm;
    q.full = opt.full;
    // After the first hit both searches run with min(d* + 1, full).
    q.after = r.d_star + 1 < opt.full ? r.d_star + 1 : opt.full;
    q.s_mm = opt.s_mm;
    q.gaps_pop = opt.s_gapo <= q.last_score;
    return q;
}

// An entry of n mismatches pushes if popped with a difference left: before the first hit
// (scores up to the best) with the full limit, after it (up to the last score) with `after`.
__device__ __forceinline__ bool m_guard_can_push(const MGuardPushes &q, int n)
{
    int score = n * q.s_mm;
    return (score <= q.best_score && n < q.full) || (score <= q.last_score && n < q.after);
}

// The strings of n mismatches born at each position into s.born: the entry points of n, and
// the mismatching children (3, or 4 at an N) of the strings of n - 1 alive one position up
// (s.alive, the level above's).
__device__ void m_guard_born(const MGuardRead &r, int n, const MGuardScratch &s, const MGuardTeam &t)
{
    const u32 *entry_points = r.counts.mm + (u64)n * (r.len + 1);
    for (int p = t.lane; p < r.len && t.lane < t.lanes; p += t.lanes) {
        u64 kids = r.seq[p] > 3 ? 4 : 3;
        s.born[p] = m_guard_add(entry_points[p], m_guard_mul(s.alive[p + 1], kids));
    }
    if (t.lane == 0) s.born[r.len] = entry_points[r.len];
    __syncthreads();
}

// The most pushing pops among the entry points' descendants (extra_pops), level by level of
// mismatches, then the gap chains where gap opens pop; false where an entry the bound does not
// count could pop. Every lane returns the same.
__device__ bool m_guard_extra_pops(const MGuardRead &r, const MGuardPushes &q, const MGuardDArray *d, int n_d,
    const MGuardScratch &s, const MGuardTeam &t, u64 &extra)
{
    int len = r.len;
    if (t.lane == 0) m_guard_chain_floor(d[0], len, s.floor);
    for (int p = t.lane; p <= len + 1 && t.lane < t.lanes; p += t.lanes) s.alive[p] = 0;
    __syncthreads();
    u64 total = 0;
    for (int n = 0; n <= q.full && m_guard_can_push(q, n); ++n) {
        // A level that could push and was not counted.
        if (n >= r.counts.levels) return false;
        m_guard_born(r, n, s, t);
        total = m_guard_add(total, m_guard_alive(s.born, d, n_d, len, s, t));
        // Strings of no difference would have gap opens that pop, not counted.
        if (n == 0 && q.gaps_pop && total > 0) return false;
        // Every lane has summed s.alive before the next level's born is written.
        __syncthreads();
    }
    if (q.gaps_pop) {
        // A gap entry point other than a chain's head that pops is not counted.
        if ((long long)r.counts.other_gap_score <= (long long)q.last_score) return false;
        // A chain's head scores s_gapo, no more than bwa pops here: all of them pop. Each kind
        // has strings of one length at a position, so each is capped on its own.
        for (int kind = M_GUARD_INSERTION; kind <= M_GUARD_DELETION; ++kind) {
            const u32 *heads = r.counts.gap + (u64)kind * (len + 1);
            for (int p = t.lane; p <= len && t.lane < t.lanes; p += t.lanes) s.born[p] = heads[p];
            __syncthreads();
            total = m_guard_add(total, m_guard_alive(s.born, d, n_d, len, s, t));
            __syncthreads();
        }
    }
    extra = total;
    return true;
}

// The bound with the D arrays d[0..n_d), the read's own first (start 0, len cells): false where
// it does not apply (-N; gap entries that pop other than as chains of one gap open), else
// `entries` = 1 + 8 x (the bounded search's pops + the entry points' pushing descendants).
__device__ bool m_guard_entries(const MGuardRead &r, const MGuardDArray *d, int n_d, const MGuardOpt &opt,
    const MGuardScratch &s, const MGuardTeam &t, u64 &entries)
{
    if (opt.nonstop) return false;
    MGuardPushes q = m_guard_pushes(r, opt);
    // Gap opens may pop only as chains: a gap open's other children, and a second gap, must
    // score more than bwa pops.
    int cheapest = opt.s_mm < opt.s_gape ? opt.s_mm : opt.s_gape;
    if (opt.s_gapo < cheapest) cheapest = opt.s_gapo;
    if (q.gaps_pop && opt.s_gapo + cheapest <= q.last_score) return false;
    u64 extra;
    if (!m_guard_extra_pops(r, q, d, n_d, s, t, extra)) return false;
    entries = m_guard_add(1, m_guard_mul(m_guard_add(r.bounded_pops, extra), 8));
    return true;
}

// The guard's rule (counted_bound): the bound with bwa's D arrays d[0..n_bwa) (the read's, then
// the seed's), and where that is over -m, with the further D arrays d[n_bwa..n_d) too (`further`
// says so). Those cost a lookup a base, so a kernel that computes them only for the reads over
// -m calls m_guard_entries with bwa's, then again with all of them.
__device__ bool m_guard_bound(const MGuardRead &r, const MGuardDArray *d, int n_bwa, int n_d, const MGuardOpt &opt,
    const MGuardScratch &s, const MGuardTeam &t, u64 &entries, bool &further)
{
    further = false;
    if (!m_guard_entries(r, d, n_bwa, opt, s, t, entries)) return false;
    if (entries <= (u64)(opt.max_entries > 0 ? opt.max_entries : 0) || n_d == n_bwa) return true;
    further = true;
    return m_guard_entries(r, d, n_d, opt, s, t, entries);
}
