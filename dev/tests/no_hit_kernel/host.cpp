// cuda/no_hit.cu built for the CPU: its kernels run as one thread after another, so that
// dev/tests/no_hit_kernel.rs can check the pass (its proofs, lookups and read lists) against
// the model without a GPU. CUDA's keywords become nothing, its atomics plain updates.
//   host BWT READS EXTRA_EDITS MAX_LOOKUPS: READS has a line per read, "MAX_DIFF EXACT CODES"
//   (EXACT 1: exact_match found the read; CODES: one digit a base, 4 for N). Prints each
//   read's n_hits (-1: not answered), then pass 1's queue, then the lookups.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "no_hit.cu"
#include "../bwt_file.h"

int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    BwtFile bwt = load_bwt(argv[1]);
    // The batch as the GPU holds it, and inexact_order's queue: the reads without an exact
    // match first, then the others from the back.
    std::vector<u8> codes;
    std::vector<u64> starts;
    std::vector<u16> lens;
    std::vector<int> max_diffs;
    std::vector<int> exact;
    std::ifstream in(argv[2]);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        int max_diff, is_exact;
        std::string seq;
        fields >> max_diff >> is_exact >> seq;
        starts.push_back(codes.size());
        for (char c : seq) codes.push_back((u8)(c - '0'));
        lens.push_back((u16)seq.size());
        max_diffs.push_back(max_diff);
        exact.push_back(is_exact);
    }
    u32 n = lens.size();
    std::vector<u32> queue(n), next_queue(n, ~0u);
    u32 order_counters[2] = {0, 0}, counters[4] = {n, 0, 0, 0}, next_counters[2] = {0, 0};
    for (u32 j = 0; j < n; ++j) {
        if (exact[j]) queue[n - 1 - order_counters[1]++] = j;
        else queue[order_counters[0]++] = j;
    }
    std::vector<int> n_hits(n, -1);
    unsigned long long lookups = 0;
    no_hit_proof(bwt.words.data(), bwt.primary, bwt.l2, codes.data(), starts.data(), lens.data(), max_diffs.data(), atoi(argv[3]),
        (u32)strtoul(argv[4], nullptr, 10), queue.data(), order_counters, counters, next_queue.data(), n_hits.data(), &lookups);
    for (u32 j = 0; j < (n > 0 ? n : 1); ++j) {
        blockIdx.x = j;
        no_hit_join(queue.data(), n, order_counters, counters, next_queue.data(), next_counters);
    }
    for (u32 j = 0; j < n; ++j) printf("%d%c", n_hits[j], j + 1 < n ? ' ' : '\n');
    for (u32 j = 0; j < next_counters[0]; ++j) printf("%u%c", next_queue[j], j + 1 < next_counters[0] ? ' ' : '\n');
    printf("%llu\n", lookups);
    return 0;
}
