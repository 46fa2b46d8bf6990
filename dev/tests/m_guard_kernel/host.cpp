// cuda/m_guard.cuh built for the CPU: the -m guard's bound of the ladder's rungs, computed as
// rung_guard_proves (cuda/inexact_match.cu) computes it with a team, one position after another,
// so that dev/tests/m_guard_kernel.rs can check it against the model (src/search/m_guard.rs).
//   host: reads from stdin "LEN SEED_START", then LEN search bases, LEN + 1 cells of the read's
//   D array, LEN - SEED_START cells of the seed's (none where SEED_START is LEN), and LEN + 1
//   entry points of one mismatch and of two by position; prints the strings alive in all
//   (the bound's extra pops) and 1 where a count outgrew 32 bits.
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

int main()
{
    int len, seed_start;
    if (scanf("%d %d", &len, &seed_start) != 2) return 2;
    std::vector<u32> seq(len), born1(len + 1), born2(len + 1);
    std::vector<u64> cells(len + 1), seed_cells(len - seed_start), alive1(len + 1), row(len + 1);
    if (!read_all(seq, "%u") || !read_all(cells, "%llu") || !read_all(seed_cells, "%llu")) return 2;
    if (!read_all(born1, "%u") || !read_all(born2, "%u")) return 2;
    std::vector<u8> bases(seq.begin(), seq.end());
    std::vector<int> floor(len + 1);
    chain_floor(cells.data(), len, floor.data());
    u64 extra = 0;
    int outgrew = 0;
    for (int i = 0; i <= len; ++i) {
        alive1[i] = alive_strings_at(i, born1.data(), floor.data(), cells.data(), seed_cells.data(), len, seed_start, row.data());
        extra += alive1[i];
    }
    for (int p = 0; p < len; ++p) {
        u64 more = born2[p] + (bases[p] > 3 ? 4 : 3) * alive1[p + 1];
        if (more > 0xffffffffULL) outgrew = 1;
        else born2[p] = (u32)more;
    }
    for (int i = 0; i <= len; ++i) extra += alive_strings_at(i, born2.data(), floor.data(), cells.data(), seed_cells.data(), len, seed_start, row.data());
    printf("%llu %d\n", extra, outgrew);
    return 0;
}
