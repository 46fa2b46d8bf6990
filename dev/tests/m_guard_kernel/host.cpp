// cuda/m_guard.cuh built for the CPU: guard_bound, the -m guard's bound of the ladder's rungs,
// run as one lane of a team, so that dev/tests/m_guard_kernel.rs can check it against the model
// (src/search/m_guard.rs).
//   host: reads from stdin "LEN SEED_START POPS", then LEN search bases, LEN + 1 cells of the
//   read's D array, LEN - SEED_START cells of the seed's (none where SEED_START is LEN), LEN + 1
//   entry points of one mismatch and of two by position, and "N" further D arrays (0 for none),
//   array k of LEN - (k + 1) x FURTHER_STARTS cells; prints the bound (2^64 - 1 where a count
//   outgrew 32 bits). The bound's phases also run as a team of several lanes, one lane after
//   another between its barriers: exit 3 where that differs.
#include <algorithm>
#include <cstdio>
#include <vector>

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
using std::min;

#include "../cuda_on_cpu.h"
// A D array's cell as cuda/inexact_match.cu packs it: the width under 2^48, the bid above.
struct Width {
    u64 w;
    int bid;
};
static Width unpack_width(u64 cell)
{
    Width x = {cell & ((1ULL << 48) - 1), (int)(cell >> 48)};
    return x;
}
#include "m_guard.cuh"

template <class T> static bool read_all(std::vector<T> &v, const char *format)
{
    for (T &x : v)
        if (scanf(format, &x) != 1) return false;
    return true;
}

// guard_bound's phases as a team of `lanes` lanes, each phase run by every lane before the next
// (the barriers between them), on fresh tables: what the GPU's lanes do together.
static u64 team_bound(GuardRows g, DArrays d, u64 pops, const u8 *seq, int len, std::vector<u64> tables, int lanes)
{
    std::fill(tables.begin(), tables.end(), 0xa5a5a5a5a5a5a5a5ULL);
    CapTables c = cap_tables(d_array_count(d, len), len, tables.data());
    *g.sum = 0;
    u64 extra = 0;
    for (int lane = 0; lane < lanes; ++lane) mark_block_ends(d, len, c, g.unprovable, lane, lanes);
    for (int lane = 0; lane < lanes; ++lane) fill_cap_tables(d, len, c, g.floor, lane, lanes);
    for (int lane = 0; lane < lanes; ++lane) extra += alive_strings(g.born1, g.floor, c, len, g.alive1, lane, lanes);
    for (int lane = 0; lane < lanes; ++lane) births_of_two(g, seq, len, lane, lanes);
    for (int lane = 0; lane < lanes; ++lane) extra += alive_strings(g.births2, g.floor, c, len, nullptr, lane, lanes);
    return *g.unprovable ? ~0ULL : 1 + 8 * (pops + extra);
}

int main()
{
    int len, seed_start, n_further;
    u64 pops;
    if (scanf("%d %d %llu", &len, &seed_start, &pops) != 3) return 2;
    std::vector<u32> seq(len), born1(len + 1), born2(len + 1), births2(len + 1), unprovable(1);
    std::vector<u64> cells(len + 1), seed_cells(len - seed_start), alive1(len + 1);
    if (!read_all(seq, "%u") || !read_all(cells, "%llu") || !read_all(seed_cells, "%llu")) return 2;
    if (!read_all(born1, "%u") || !read_all(born2, "%u")) return 2;
    if (scanf("%d", &n_further) != 1 || n_further > further_arrays(len)) return 2;
    std::vector<u64> further((u64)n_further * (len + 1));
    for (int k = 0; k < n_further; ++k)
        for (int x = 0; x < len - (k + 1) * FURTHER_STARTS; ++x)
            if (scanf("%llu", &further[(u64)k * (len + 1) + x]) != 1) return 2;
    std::vector<u8> bases(seq.begin(), seq.end());
    std::vector<int> floor(len + 1);
    unsigned long long sum = 0;
    GuardRows g = {born1.data(), born2.data(), births2.data(), floor.data(), alive1.data(), &sum, unprovable.data()};
    DArrays d = {cells.data(), seed_cells.data(), seed_start, further.data(), n_further};
    std::vector<u64> tables(cap_table_cells(d_array_count(d, len), len), 0xa5a5a5a5a5a5a5a5ULL);
    u64 bound = guard_bound(g, d, pops, bases.data(), len, tables.data(), 0, 1);
    for (int lanes = 2; lanes <= 5; lanes += 3)
        if (team_bound(g, d, pops, bases.data(), len, tables, lanes) != bound) return 3;
    printf("%llu\n", bound);
    return 0;
}
