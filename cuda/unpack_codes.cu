// The inexact kernels' reads, a byte a base back to back, unpacked on the GPU from exact_match's
// (src/gpu/unpack_codes.rs): the host then page-locks and copies the reads once, at half a byte
// a base, instead of twice.
//
// exact_match's reads are 4-bit codes (0..3 = ACGT, 4 = N), 8 to a word, first base in the low
// bits, each read's first word at packed_start[b] (b: the read's index in the batch). With
// sequence_stride (`stride`) the words of each group of 32 reads are interleaved: word w of the
// group's read m at the group's first word + 32 w + m, where m = b % 32 (groups start at
// multiples of 32). One thread a read the inexact kernels take (read_of[j] is its index in the
// batch), its codes at code_start[j].

extern "C" __global__ void __launch_bounds__(256) unpack_codes(const u32 *__restrict__ packed,
    const u64 *__restrict__ packed_start, int stride, const u32 *__restrict__ read_of,
    const u64 *__restrict__ code_start, const u16 *__restrict__ read_len, u32 n, u8 *__restrict__ codes)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    u32 b = read_of[j];
    const u32 *words = packed + packed_start[b] + (stride ? b % 32 : 0);
    u32 step = stride ? 32 : 1;
    u8 *out = codes + code_start[j];
    int len = read_len[j];
    for (int at = 0; at < len; at += 8) {
        u32 word = words[(u64)(at / 8) * step];
        int end = at + 8 < len ? at + 8 : len;
        for (int p = at; p < end; ++p) out[p] = (u8)(word >> (4 * (p - at)) & 15);
    }
}
