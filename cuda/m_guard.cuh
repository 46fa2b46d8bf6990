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
