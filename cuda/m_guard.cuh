// The -m guard's bound for a best hit of two mismatches (src/search/m_guard.rs: extra_pops with
// the occurrence caps of bwa's own two D arrays, kernel_bounds' second form, and of the further
// D arrays, counted_bound's second stage), for the ladder's rungs in the team passes
// (src/gpu/rungs.rs compiles it after inexact_match.cu, which defines Width and unpack_width,
// and before rung_guard.cu, which calls it). Each string born at read position p (an entry
// point, or a mismatching child) goes on as a chain of matching children, a string a position;
// the strings of a level alive at position i are those born at p >= i whose chain reaches i, no
// more than any block prefix of a D array lying between i and p occurs (distinct strings take
// distinct occurrences of it).

// Every loop here stays rolled (`#pragma unroll 1`): unrolled, the bound took about 25 KB of the
// rungs' team kernel's body and its copy in the second stage 35 KB, and the team kernel of 32
// lanes spilled 164 bytes; rolled, 8 KB, 11 KB and 40 bytes (sm_90 at 1f6bc21).

// For each position x (0 to len): the lowest position a chain of matching children from x can
// reach, one above the start of the last block of the read's D array that ends below x and did
// not occur (chain_floor in m_guard.rs). A block ends where the D array's bid grows.
__device__ void chain_floor(const u64 *cells, int len, int *floor)
{
    int lowest = 0, bid = 0, start = 0;
#pragma unroll 1
    for (int x = 0; x < len; ++x) {
        Width w = unpack_width(cells[x]);
        floor[x] = lowest;
        if (w.bid > bid) {
            lowest = start + 1;
            bid = w.bid;
            start = x + 1;
        }
    }
    floor[len] = lowest;
}

// row[x + 1] lowered to the count of each prefix of a block of the D array `cells` (n cells from
// read position `offset`) that ends at x < len and starts at i or above (caps_row in m_guard.rs).
__device__ void caps_of(const u64 *cells, int n, int offset, int i, int len, u64 *row)
{
    int bid = 0, start = offset;
#pragma unroll 1
    for (int x = 0; x < n; ++x) {
        Width w = unpack_width(cells[x]);
        int pos = offset + x, block_start = start;
        if (w.bid > bid) {
            bid = w.bid;
            start = pos + 1;
        } else if (pos < len && block_start >= i && w.w < row[pos + 1]) {
            row[pos + 1] = w.w;
        }
    }
}

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

// The strings of a level alive at position i (alive_strings in m_guard.rs): `born` the strings
// born by position, `floor` chain_floor's, capped by the D arrays `d`; `row` len + 1 cells of
// the caller's scratch.
__device__ u64 alive_strings_at(int i, const u32 *born, const int *floor, const DArrays &d, int len, u64 *row)
{
#pragma unroll 1
    for (int p = i; p <= len; ++p) row[p] = ~0ULL;
    caps_of(d.cells, len, 0, i, len, row);
    if (d.seed_start < len) caps_of(d.seed_cells, len - d.seed_start, d.seed_start, i, len, row);
#pragma unroll 1
    for (int k = 0; k < d.n_further; ++k) {
        int offset = (k + 1) * FURTHER_STARTS;
        caps_of(d.further + (u64)k * (len + 1), len - offset, offset, i, len, row);
    }
#pragma unroll 1
    for (int p = i; p < len; ++p) row[p + 1] = min(row[p + 1], row[p]);
    u64 strings = 0;
#pragma unroll 1
    for (int p = len; p >= i; --p) {
        if (floor[p] <= i) strings += born[p];
        strings = min(strings, row[p]);
    }
    return strings;
}

// The bound on bwa's stack for a best hit of two mismatches: 1 + 8 x (the rung's `pops` and the
// strings of one and two mismatches alive) with the D arrays `d` (entries_bound in m_guard.rs);
// ~0 where the read is unprovable (a count outgrew 32 bits, or the rung marked it). The team's
// lanes share the positions; `caps` is len + 1 cells of the lane's own. Every lane returns the
// same. Inline: out of line, with its arguments by value, pass 2 of the rungs spilled nothing and
// took 5-8 % longer (bench/results/measurements.md, "The guard's second stage").
__device__ __forceinline__ u64 guard_bound(GuardRows g, DArrays d, u64 pops, const u8 *seq, int len, u64 *caps, int lane, int lanes)
{
    if (lane == 0) {
        chain_floor(d.cells, len, g.floor);
        *g.sum = 0;
    }
    __syncthreads();
    u64 extra = 0;
#pragma unroll 1
    for (int i = lane; i <= len; i += lanes) {
        g.alive1[i] = alive_strings_at(i, g.born1, g.floor, d, len, caps);
        extra += g.alive1[i];
    }
    __syncthreads();
    // The strings of one mismatch alive one position up each have 3 (4 at an N) mismatching children.
#pragma unroll 1
    for (int p = lane; p <= len; p += lanes) {
        u64 more = g.born2[p] + (p < len ? (seq[p] > 3 ? 4 : 3) * g.alive1[p + 1] : 0);
        if (more > 0xffffffffULL) *g.unprovable = 1;
        else g.births2[p] = (u32)more;
    }
    __syncthreads();
#pragma unroll 1
    for (int i = lane; i <= len; i += lanes) extra += alive_strings_at(i, g.births2, g.floor, d, len, caps);
    atomicAdd(g.sum, (unsigned long long)extra);
    __syncthreads();
    return *g.unprovable ? ~0ULL : 1 + 8 * (pops + *g.sum);
}
