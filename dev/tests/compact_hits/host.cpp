// cuda/compact_hits.cu built for the CPU, so that dev/tests/compact_hits.rs can check the packed
// hits without a GPU. The grid's threads run last to first, so the chunks land out of order as
// they may on a GPU.
//   host: reads from stdin "N PER_READ CHUNK_READS", then N hit counts, then N x PER_READ x 3
//   words (each read's hit slots); prints chunk_at on one line, then the packed words.
#include <cstdio>
#include <vector>

typedef unsigned int u32;
typedef unsigned long long u64;

#include "../cuda_on_cpu.h"
#include "compact_hits.cu"

int main()
{
    u32 n, chunk_reads;
    int per_read;
    if (scanf("%u %d %u", &n, &per_read, &chunk_reads) != 3) return 2;
    std::vector<int> n_hits(n);
    std::vector<u64> hits((u64)n * per_read * 3);
    for (int &c : n_hits)
        if (scanf("%d", &c) != 1) return 2;
    for (u64 &w : hits)
        if (scanf("%llu", &w) != 1) return 2;
    u32 chunks = (n + chunk_reads - 1) / chunk_reads;
    std::vector<u32> chunk_at(1 + chunks, 0xFFFFFFFFu);
    chunk_at[0] = 0;
    std::vector<u64> packed(hits.size() + 1, ~0ULL);
    launch_last_first((chunks + 3) / 4, 4, [&] { compact_hits(n_hits.data(), hits.data(), per_read, n, chunk_reads, chunk_at.data(), packed.data()); });
    for (u32 x : chunk_at) printf("%u ", x);
    printf("\n");
    for (u64 i = 0; i < (u64)chunk_at[0] * 3; ++i) printf("%llu ", packed[i]);
    printf("\n");
    return 0;
}
