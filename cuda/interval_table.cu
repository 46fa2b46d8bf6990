// The interval table (bcuda-index's IntervalTable, the same array): the suffix-array interval
// of every string of up to `depth` bases, level d after levels 1..d-1, string w's four
// one-base extensions c·w (numbered 4w + c) side by side, so that the inexact search's first
// steps read one 64-byte line instead of two occurrence lookups over the whole BWT.

// The empty interval every extension of an empty interval gets (interval_table.rs, EMPTY).
#define EMPTY_K 1ULL
#define EMPTY_L 0ULL

__device__ __forceinline__ u64 level_start(int d) { return ((1ULL << (2 * d)) - 4) / 3; }

// Level d + 1 from level d (the whole BWT for d = 0): one thread per string of level d.
extern "C" __global__ void __launch_bounds__(256) build_interval_level(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2, ulonglong2 *intervals, int d)
{
    u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= 1ULL << (2 * d)) return;
    ulonglong2 parent = d == 0 ? make_ulonglong2(0, seq_len) : intervals[level_start(d) + w];
    ulonglong2 *kids = intervals + level_start(d + 1) + 4 * w;
    if (parent.x > parent.y) {
        for (int c = 0; c < 4; ++c) kids[c] = make_ulonglong2(EMPTY_K, EMPTY_L);
        return;
    }
    u64 cnt_k[4], cnt_l[4];
    occ4(words, primary, parent.x - 1, cnt_k);
    occ4(words, primary, parent.y, cnt_l);
    for (int c = 0; c < 4; ++c) kids[c] = make_ulonglong2(l2[c] + cnt_k[c] + 1, l2[c] + cnt_l[c]);
}
