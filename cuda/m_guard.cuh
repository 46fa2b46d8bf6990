// The -m guard's bound for a best hit of two mismatches (src/search/m_guard.rs: extra_pops with
// the occurrence caps of bwa's own two D arrays, kernel_bounds' second form), for the ladder's
// rungs in the team passes (src/gpu/rungs.rs compiles it after inexact_match.cu, which declares
// what it calls). Each string born at read position p (an entry point, or a mismatching child)
// goes on as a chain of matching children, a string a position; the strings of a level alive at
// position i are those born at p >= i whose chain reaches i, no more than any block prefix of a
// D array lying between i and p occurs (distinct strings take distinct occurrences of it).

// For each position x (0 to len): the lowest position a chain of matching children from x can
// reach, one above the start of the last block of the read's D array that ends below x and did
// not occur (chain_floor in m_guard.rs). A block ends where the D array's bid grows.
__device__ void chain_floor(const u64 *cells, int len, int *floor)
{
    int lowest = 0, bid = 0, start = 0;
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

// The strings of a level alive at position i (alive_strings in m_guard.rs): `born` the strings
// born by position, `floor` chain_floor's, the read's D array (`cells`) and the seed's
// (`seed_cells`, from read position seed_start; none where seed_start is len); `row` len + 1
// cells of the caller's scratch.
__device__ u64 alive_strings_at(int i, const u32 *born, const int *floor, const u64 *cells, const u64 *seed_cells, int len, int seed_start, u64 *row)
{
    for (int p = i; p <= len; ++p) row[p] = ~0ULL;
    caps_of(cells, len, 0, i, len, row);
    if (seed_start < len) caps_of(seed_cells, len - seed_start, seed_start, i, len, row);
    for (int p = i; p < len; ++p) row[p + 1] = min(row[p + 1], row[p]);
    u64 strings = 0;
    for (int p = len; p >= i; --p) {
        if (floor[p] <= i) strings += born[p];
        strings = min(strings, row[p]);
    }
    return strings;
}

// The bound on bwa's stack for a best hit of two mismatches: 1 + 8 x (the rung's `pops` and the
// strings of one and two mismatches alive), from the entry points of one and two mismatches by
// position (`born1`, `born2`, which this adds the strings of one mismatch's children to); ~0
// where the read is `unprovable` (a count outgrew 32 bits, or the rung marked it). The team's
// lanes share the positions; `floor`, `alive1` and `sum` are the team's scratch, `caps` len + 1
// cells of the lane's own. Out of line, its arguments by value, so that the search loop keeps
// its registers (the read's state taken by reference would live in memory for the whole
// kernel). Every lane returns the same.
__device__ __noinline__ u64 guard_bound(u32 *born1, u32 *born2, int *floor, u64 *alive1, unsigned long long *sum, u32 *unprovable, u64 pops,
    const u8 *seq, int len, int seed_start, const u64 *cells, const u64 *seed_cells, u64 *caps, int lane, int lanes)
{
    if (lane == 0) {
        chain_floor(cells, len, floor);
        *sum = 0;
    }
    __syncthreads();
    u64 extra = 0;
    for (int i = lane; i <= len; i += lanes) {
        alive1[i] = alive_strings_at(i, born1, floor, cells, seed_cells, len, seed_start, caps);
        extra += alive1[i];
    }
    __syncthreads();
    // The strings of one mismatch alive one position up each have 3 (4 at an N) mismatching children.
    for (int p = lane; p < len; p += lanes) {
        u64 more = born2[p] + (seq[p] > 3 ? 4 : 3) * alive1[p + 1];
        if (more > 0xffffffffULL) *unprovable = 1;
        else born2[p] = (u32)more;
    }
    __syncthreads();
    for (int i = lane; i <= len; i += lanes) extra += alive_strings_at(i, born2, floor, cells, seed_cells, len, seed_start, caps);
    atomicAdd(sum, (unsigned long long)extra);
    __syncthreads();
    return *unprovable ? ~0ULL : 1 + 8 * (pops + *sum);
}
