// cuda/occ_sectors.cu and bwt.cuh's sector counts built for the CPU: the build kernels run as
// one thread after another, then every row's counts from the sectors are compared with
// bwt.cuh's counts over bwa's array, and its pairs' counts with pairs counted row by row
// through LF, so that dev/tests/occ_sectors.rs can check the layout without a GPU.
//   host BWT: prints "rows N mismatches M pair mismatches P" and the first mismatches.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "occ_sectors.cu"
#include "../bwt_file.h"

static int row_base(const BwtFile &bwt, u64 k)
{
    u64 p = k - (k > bwt.primary ? 1 : 0);
    return bwt.words[(p >> 7) * OCC_BLOCK_WORDS + 8 + (p & 127) / 16] >> (30 - 2 * (p % 16)) & 3;
}

// The pairs' counts at every row and first base against pairs counted row by row (each row's
// base and its LF row's), and against occ at the LF rows (the search's use of them).
static u64 pair_mismatches(const BwtFile &bwt, const std::vector<u32> &sectors)
{
    u64 primary = bwt.primary, seq_len = bwt.seq_len, mismatches = 0;
    const u64 *head = pair_header(sectors.data(), seq_len);
    u64 counted[4][4] = {};
    for (u64 k = 0; k <= seq_len; ++k) {
        if (k != primary) {
            int x = row_base(bwt, k);
            u64 lf = bwt.l2[x] + occ(bwt.words.data(), primary, k, x);
            if (lf != primary) ++counted[x][row_base(bwt, lf)];
        }
        for (int x = 0; x < 4; ++x) {
            u64 cnt[4], pairs[4], want[4];
            sector_pair_occ4(sectors.data(), seq_len, primary, k, x, cnt, pairs);
            occ4(bwt.words.data(), primary, k, want);
            u64 lf = bwt.l2[x] + occ(bwt.words.data(), primary, k, x);
            for (int y = 0; y < 4; ++y) {
                bool same = pairs[y] == counted[x][y] && cnt[y] == want[y]
                    && sector_pair_occ(sectors.data(), seq_len, primary, k, x, y) == counted[x][y]
                    && head[4 * x + y] + pairs[y] == occ(bwt.words.data(), primary, lf, y);
                if (!same && mismatches++ < 5) printf("row %llu pair %d%d: %llu, counted %llu\n", k, x, y, pairs[y], counted[x][y]);
            }
        }
    }
    return mismatches;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    BwtFile bwt = load_bwt(argv[1]);
    u64 primary = bwt.primary, seq_len = bwt.seq_len;
    const std::vector<u32> &words = bwt.words;
    u64 n_sectors = (seq_len + SECTOR_ROWS - 1) / SECTOR_ROWS;
    std::vector<u32> sectors(8 * (SECTOR_SUPERS + n_sectors) + 2 * (PAIR_HEADER + 16 * SECTOR_SUPERS) + 32 * n_sectors);
    u64 threads = n_sectors > 4 * SECTOR_SUPERS ? n_sectors : 4 * SECTOR_SUPERS;
    for (u64 t = 0; t < threads; ++t) {
        blockIdx.x = (unsigned)t;
        build_occ_sectors(words.data(), seq_len, sectors.data());
    }
    threads = n_sectors > 16 * SECTOR_SUPERS ? n_sectors : 16 * SECTOR_SUPERS;
    for (u64 t = 0; t < threads; ++t) {
        blockIdx.x = (unsigned)t;
        build_pair_sectors(sectors.data(), seq_len, primary, bwt.l2);
    }
    u64 mismatches = 0;
    for (u64 k = 0; k <= seq_len; ++k) {
        u64 want[4], got[4];
        occ4(words.data(), primary, k, want);
        u64 x = k - (k >= primary ? 1 : 0);
        sector_count4(sectors.data(), x, got);
        for (int c = 0; c < 4; ++c) {
            u64 one = sector_count(sectors.data(), x, c);
            if (got[c] != want[c] || one != want[c]) {
                if (mismatches++ < 5) printf("row %llu base %d: %llu %llu, bwa %llu\n", k, c, got[c], one, want[c]);
            }
        }
        if (k != primary) {
            u64 p = k - (k > primary ? 1 : 0);
            int base = words[(p >> 7) * OCC_BLOCK_WORDS + 8 + (p & 127) / 16] >> (30 - 2 * (p % 16)) & 3;
            if (sector_base(sectors.data(), p) != base && mismatches++ < 5) printf("row %llu: base differs\n", k);
        }
    }
    printf("rows %llu mismatches %llu pair mismatches %llu\n", seq_len + 1, mismatches, pair_mismatches(bwt, sectors));
    return 0;
}
