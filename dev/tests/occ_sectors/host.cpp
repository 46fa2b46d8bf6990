// cuda/occ_sectors.cu and bwt.cuh's sector counts built for the CPU: the build kernel runs as
// one thread after another, then every row's counts from the sectors are compared with
// bwt.cuh's counts over bwa's array, so that dev/tests/occ_sectors.rs can check the layout
// without a GPU.
//   host BWT: prints "rows N mismatches M" and the first mismatches.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "occ_sectors.cu"
#include "../bwt_file.h"

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    BwtFile bwt = load_bwt(argv[1]);
    u64 primary = bwt.primary, seq_len = bwt.seq_len;
    const std::vector<u32> &words = bwt.words;
    u64 n_sectors = (seq_len + SECTOR_ROWS - 1) / SECTOR_ROWS;
    std::vector<u32> sectors(8 * (SECTOR_SUPERS + n_sectors));
    u64 threads = n_sectors > 4 * SECTOR_SUPERS ? n_sectors : 4 * SECTOR_SUPERS;
    for (u64 t = 0; t < threads; ++t) {
        blockIdx.x = (unsigned)t;
        build_occ_sectors(words.data(), seq_len, sectors.data());
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
    printf("rows %llu mismatches %llu\n", seq_len + 1, mismatches);
    return 0;
}
