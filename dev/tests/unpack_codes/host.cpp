// cuda/unpack_codes.cu built for the CPU, so that dev/tests/unpack_codes.rs can check the
// inexact kernels' codes without a GPU. The grid's threads run last to first.
//   host: reads from stdin "N_WORDS N_READS N STRIDE", then the packed words, each batch read's
//   first word, then for each of the N inexact reads its batch index, first code and length;
//   prints the codes on one line.
#include <cstdio>
#include <vector>

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;
typedef unsigned char u8;

#include "../cuda_on_cpu.h"
#include "unpack_codes.cu"

int main()
{
    u32 n_words, n_reads, n;
    int stride;
    if (scanf("%u %u %u %d", &n_words, &n_reads, &n, &stride) != 4) return 2;
    std::vector<u32> words(n_words), read_of(n);
    std::vector<u64> packed_start(n_reads), code_start(n);
    std::vector<u16> lens(n);
    for (u32 &w : words)
        if (scanf("%u", &w) != 1) return 2;
    for (u64 &s : packed_start)
        if (scanf("%llu", &s) != 1) return 2;
    u64 n_codes = 0;
    for (u32 j = 0; j < n; ++j) {
        unsigned len;
        if (scanf("%u %llu %u", &read_of[j], &code_start[j], &len) != 3) return 2;
        lens[j] = (u16)len;
        if (code_start[j] + len > n_codes) n_codes = code_start[j] + len;
    }
    std::vector<u8> codes(n_codes, 0xEE);
    launch_last_first((n + 7) / 8, 8, [&] { unpack_codes(words.data(), packed_start.data(), stride, read_of.data(), code_start.data(), lens.data(), n, codes.data()); });
    for (u8 c : codes) printf("%u ", c);
    printf("\n");
    return 0;
}
