// The -m guard's bound for a best hit of two mismatches (src/search/m_guard.rs: extra_pops with
// the occurrence caps of bwa's own two D arrays, kernel_bounds' second form, and of the further
// D arrays, counted_bound's second stage), for the ladder's rungs in the team passes
// (src/gpu/rungs.rs compiles it after inexact_match.cu, which defines Width and unpack_width,
// and before rung_guard.cu, which calls it). Each string born at read position p (an entry
// point, or a mismatching child) goes on as a chain of matching children, a string a position;
// the strings of a level alive at position i are those born at p >= i whose chain reaches i, no
// more than any block prefix of a D array lying between i and p occurs (distinct strings take
// distinct occurrences of it).

// The read's D arrays the bound's caps read: bwa's own two (the read's `cells`, and the seed's
// `seed_cells` from read position seed_start, none where seed_start is len) and, in the second
// stage, `n_further` more (`further`, len + 1 cells apart): bwt_cal_width of the read from every
// FURTHER_STARTS-th position on (further_d_arrays in m_guard.rs), array k from position
// (k + 1) x FURTHER_STARTS with len less that many cells.
#define FURTHER_STARTS 8
struct DArrays {
    const u64 *cells, *seed_cells;
    int seed_start;
    const u64 *further;
    int n_further;
};

// The further D arrays of a read of len bases: one from each FURTHER_STARTS-th position below len.
__device__ __forceinline__ int further_arrays(int len) { return len > 0 ? (len - 1) / FURTHER_STARTS : 0; }

// The team's counters the bound works in, rows of len + 1 cells: the entry points of one and
// two mismatches by position (`born1`, `born2`, as counted), the strings of two mismatches born
// (`births2`: born2 and the mismatching children of the strings of one), the chain floors, the
// strings of one mismatch alive (`alive1`), the bound's sum and whether a count outgrew 32 bits.
struct GuardRows {
    const u32 *born1, *born2;
    u32 *births2;
    int *floor;
    u64 *alive1;
    unsigned long long *sum;
    u32 *unprovable;
};

// Every loop here stays rolled (`#pragma unroll 1`): the bound runs for a few reads in a hundred,
// and its code sits in the search's kernel.

// The bound's D arrays one at a time: array k has `n` cells from read position `offset` (the
// read's own, then the seed's where there is one, then the further ones).
struct DArray {
    const u64 *cells;
    int n, offset;
};

__device__ __forceinline__ int d_array_count(const DArrays &d, int len) { return 1 + (d.seed_start < len) + d.n_further; }

__device__ __forceinline__ DArray d_array(const DArrays &d, int len, int k)
{
    int seeded = d.seed_start < len;
    if (k == 0) return DArray{d.cells, len, 0};
    if (seeded && k == 1) return DArray{d.seed_cells, len - d.seed_start, d.seed_start};
    int f = k - 1 - seeded, offset = (f + 1) * FURTHER_STARTS;
    return DArray{d.further + (u64)f * (len + 1), len - offset, offset};
}

// The D arrays' caps by array and read position, computed once a read so that each position's
// strings are one pass up the read over them (no row of its own, no chain of loads through
// memory): `count[k][p]`, the count of the prefix of array k's block that ends at p (NO_CAP where
// none does: p outside the array, or the cell where a block that did not occur ends), `start[k][p]`
// that block's start, and `bid_from[k][b]`, the cell where bid b first appears (a block's end).
#define NO_CAP (1ULL << 62)
struct CapTables {
    u64 *count;
    int *start, *bid_from;
    int arrays;
};

// The scratch cells (u64) the tables of `arrays` D arrays take for a read of `len` bases.
__device__ __forceinline__ u64 cap_table_cells(int arrays, int len) { return (u64)arrays * (len + 1) + ((u64)arrays * (2 * len + 3) + 1) / 2; }

__device__ __forceinline__ CapTables cap_tables(int arrays, int len, u64 *cells)
{
    int *start = (int *)(cells + (u64)arrays * (len + 1));
    return CapTables{cells, start, start + (u64)arrays * (len + 1), arrays};
}

__device__ __forceinline__ int bid_at(const DArray &a, int x) { return x < 0 ? 0 : unpack_width(a.cells[x]).bid; }

// Where each bid of each array first appears; a bid that falls, or one past the table, makes the
// read unprovable (bwt_cal_width's bids rise by one at a block's end).
__device__ void mark_block_ends(const DArrays &d, int len, CapTables c, u32 *unprovable, int lane, int lanes)
{
#pragma unroll 1
    for (int k = 0; k < c.arrays; ++k) {
        DArray a = d_array(d, len, k);
#pragma unroll 1
        for (int x = lane; x < a.n; x += lanes) {
            int bid = bid_at(a, x), before = bid_at(a, x - 1);
            if (bid < before || bid > len + 1) *unprovable = 1;
            else if (bid > before) c.bid_from[(u64)k * (len + 2) + bid] = x;
        }
    }
}

// The last block end of array `a` at or before its cell x (-1 for none). Bids past the table, or
// a bid that falls (whose first cell is not marked), make the read unprovable: then no cell
// outside 0 to x is returned, so that no load leaves the array.
__device__ __forceinline__ int last_end(const DArray &a, const int *bid_from, int x, int len)
{
    int bid = bid_at(a, x), end = bid > 0 && bid <= len + 1 ? bid_from[bid] : -1;
    return end >= 0 && end <= x ? end : -1;
}

// The tables' counts and starts, and each position's chain floor (chain_floor in m_guard.rs: one
// above the start of the last block of the read's D array that ended below it).
__device__ void fill_cap_tables(const DArrays &d, int len, CapTables c, int *floor, int lane, int lanes)
{
#pragma unroll 1
    for (int k = 0; k < c.arrays; ++k) {
        DArray a = d_array(d, len, k);
        const int *bid_from = c.bid_from + (u64)k * (len + 2);
#pragma unroll 1
        for (int p = lane; p < len; p += lanes) {
            int x = p - a.offset, bid = x >= 0 && x < a.n ? bid_at(a, x) : -1;
            bool prefix = bid >= 0 && bid == bid_at(a, x - 1);
            c.count[(u64)k * (len + 1) + p] = prefix ? unpack_width(a.cells[x]).w : NO_CAP;
            c.start[(u64)k * (len + 1) + p] = prefix ? a.offset + last_end(a, bid_from, x, len) + 1 : 0;
        }
    }
    DArray own = d_array(d, len, 0);
#pragma unroll 1
    for (int x = lane; x <= len; x += lanes) {
        int e = last_end(own, c.bid_from, x - 1, len);
        floor[x] = e < 0 ? 0 : last_end(own, c.bid_from, e - 1, len) + 2;
    }
}

// The strings of a level alive at position i (alive_strings in m_guard.rs): those `born` at each
// p >= i whose chain reaches i (floor[p] <= i), capped by the fewest occurrences of a block
// prefix lying between i and p. Read up from i: at each p, the strings born below p plus the cap
// below p bound those alive at i.
__device__ u64 alive_strings_at(int i, const u32 *born, const int *floor, CapTables c, int len)
{
    u64 cap = NO_CAP, born_below = 0, strings = NO_CAP;
#pragma unroll 1
    for (int p = i; p <= len; ++p) {
        strings = min(strings, cap + born_below);
        if (floor[p] <= i) born_below += born[p];
        if (p == len) break;
#pragma unroll 1
        for (int k = 0; k < c.arrays; ++k) {
            u64 cell = (u64)k * (len + 1) + p;
            if (c.start[cell] >= i) cap = min(cap, c.count[cell]);
        }
    }
    return min(strings, born_below);
}

// The strings of one mismatch alive one position up each have 3 (4 at an N) mismatching
// children: with the entry points of two, the strings of two born by position.
__device__ void births_of_two(GuardRows g, const u8 *seq, int len, int lane, int lanes)
{
#pragma unroll 1
    for (int p = lane; p <= len; p += lanes) {
        u64 more = g.born2[p] + (p < len ? (seq[p] > 3 ? 4 : 3) * g.alive1[p + 1] : 0);
        if (more > 0xffffffffULL) *g.unprovable = 1;
        else g.births2[p] = (u32)more;
    }
}

// The lane's share of the strings alive at a level, by position (into `alive` where not null).
__device__ u64 alive_strings(const u32 *born, const int *floor, CapTables c, int len, u64 *alive, int lane, int lanes)
{
    u64 sum = 0;
#pragma unroll 1
    for (int i = lane; i <= len; i += lanes) {
        u64 strings = alive_strings_at(i, born, floor, c, len);
        if (alive) alive[i] = strings;
        sum += strings;
    }
    return sum;
}

// The bound on bwa's stack for a best hit of two mismatches: 1 + 8 x (the rung's `pops` and the
// strings of one and two mismatches alive) with the D arrays `d` (entries_bound in m_guard.rs);
// ~0 where the read is unprovable (a count outgrew 32 bits, or the rung marked it). The team's
// lanes share the positions; `tables` is cap_table_cells of scratch the team shares. Every lane
// returns the same.
__device__ __forceinline__ u64 guard_bound(GuardRows g, DArrays d, u64 pops, const u8 *seq, int len, u64 *tables, int lane, int lanes)
{
    CapTables c = cap_tables(d_array_count(d, len), len, tables);
    if (lane == 0) *g.sum = 0;
    mark_block_ends(d, len, c, g.unprovable, lane, lanes);
    __syncthreads();
    fill_cap_tables(d, len, c, g.floor, lane, lanes);
    __syncthreads();
    u64 extra = alive_strings(g.born1, g.floor, c, len, g.alive1, lane, lanes);
    __syncthreads();
    births_of_two(g, seq, len, lane, lanes);
    __syncthreads();
    extra += alive_strings(g.births2, g.floor, c, len, nullptr, lane, lanes);
    atomicAdd(g.sum, (unsigned long long)extra);
    __syncthreads();
    return *g.unprovable ? ~0ULL : 1 + 8 * (pops + *g.sum);
}
