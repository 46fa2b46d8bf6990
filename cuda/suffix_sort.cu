// `bcuda index` on the GPU: the suffixes of one chunk of the index's text sorted by their
// first 64 bases. Host side: src/gpu/index_sort.rs; the same pipeline on the CPU, step by
// step, is index/src/chunk_sort.rs's RadixModel (tested in CI against the plain suffix sort).
//
// The text T (both strands, n bases) stays on the GPU, packed as the CPU packs it: 32 bases
// per u64, the first in the high bits, zeros after the last base and one spare word. Per chunk
// (the suffixes of buckets lo..hi, a bucket being the suffixes' first k bases):
//   gather_chunk      positions into their buckets' slots (any order within a bucket)
//   make_keys         each suffix's first 64 bases as a 128-bit key (zeros past the end)
//   varying_bits      which key bits differ between keys (digits that do not are skipped)
//   per 8-bit digit that varies, lowest first (LSD radix sort, stable):
//     tile_histograms digit counts per tile of TILE keys, stored digit-major
//     scan_blocks / add_block_offsets   their exclusive scan: each (digit, tile)'s first slot
//     scatter         each tile's keys to their slots, in order (stable)
//   finish            slot = position | BWT character << 62 | tied << 61 (key = previous key)
// The CPU then orders the runs of tied keys by the difference cover's comparison.
// Self-contained: no CUDA headers (NVRTC alone compiles it). Needs sm_70+ (__match_any_sync).

typedef unsigned long long u64;
typedef unsigned int u32;

// Keys per tile of the radix sort: one warp's share of a pass (index/src/chunk_sort.rs RADIX_TILE).
#define TILE 4096
// Warps (tiles) per block of tile_histograms and scatter.
#define TILE_WARPS 8
// The scan: threads per block and items per thread (SCAN_BLOCK * SCAN_ITEMS per block).
#define SCAN_BLOCK 256
#define SCAN_ITEMS 8

#define TIED (1ULL << 61)

// The 32 bases from position i, first base in the high bits (zeros past the end).
__device__ __forceinline__ u64 window(const u64 *__restrict__ t, u64 i)
{
    u64 w = i >> 5;
    u32 shift = 2 * (u32)(i & 31);
    u64 a = t[w];
    return shift == 0 ? a : (a << shift) | (t[w + 1] >> (64 - shift));
}

__device__ __forceinline__ u32 base_at(const u64 *__restrict__ t, u64 i)
{
    return (u32)(t[i >> 5] >> (62 - 2 * (i & 31))) & 3;
}

// Digit d (0 = lowest 8 bits) of the key (x = high 64 bits, y = low 64 bits).
__device__ __forceinline__ u32 digit(ulonglong2 key, u32 d)
{
    return d < 8 ? (u32)(key.y >> (8 * d)) & 255 : (u32)(key.x >> (8 * (d - 8))) & 255;
}

// counts[b] += 1 for the bucket b (first k bases) of every suffix of T.
extern "C" __global__ void count_buckets(const u64 *__restrict__ t, u64 n, u32 k, u64 *counts)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&counts[window(t, i) >> (64 - 2 * k)], 1ULL);
}

// The chunk's positions: a suffix of bucket b in lo..hi takes the next slot of its bucket
// (cursor[b - lo] starts at the bucket's first slot in the chunk).
extern "C" __global__ void gather_chunk(const u64 *__restrict__ t, u64 n, u32 k, u64 lo, u64 hi, u32 *cursor, u64 *pos)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u64 b = window(t, i) >> (64 - 2 * k);
        if (b >= lo && b < hi) {
            u32 slot = atomicAdd(&cursor[b - lo], 1u);
            pos[slot] = i;
        }
    }
}

// keys[j] = the first 64 bases of the suffix at pos[j], zeros past the end of T.
extern "C" __global__ void make_keys(const u64 *__restrict__ t, u64 n, const u64 *__restrict__ pos, u32 m, ulonglong2 *keys)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += stride) {
        u64 p = pos[j];
        ulonglong2 key;
        key.x = window(t, p);
        key.y = p + 32 < n ? window(t, p + 32) : 0;
        keys[j] = key;
    }
}

// mask[0] |= key.x ^ keys[0].x, mask[1] |= key.y ^ keys[0].y over all keys: the bits in which
// some key differs from the first (mask zeroed before).
extern "C" __global__ void varying_bits(const ulonglong2 *__restrict__ keys, u32 m, u64 *mask)
{
    ulonglong2 first = keys[0];
    u64 hi = 0, lo = 0;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += stride) {
        ulonglong2 key = keys[j];
        hi |= key.x ^ first.x;
        lo |= key.y ^ first.y;
    }
    for (int o = 16; o > 0; o >>= 1) {
        hi |= __shfl_xor_sync(0xffffffffu, hi, o);
        lo |= __shfl_xor_sync(0xffffffffu, lo, o);
    }
    if ((threadIdx.x & 31) == 0 && (hi | lo) != 0) {
        atomicOr(&mask[0], hi);
        atomicOr(&mask[1], lo);
    }
}

// hist[v * tiles + tile] = keys of the tile whose digit d is v. One warp per tile.
extern "C" __global__ void tile_histograms(const ulonglong2 *__restrict__ keys, u32 m, u32 d, u32 tiles, u32 *hist)
{
    __shared__ u32 counts[TILE_WARPS][256];
    u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    u64 tile = (u64)blockIdx.x * TILE_WARPS + warp;
    for (u32 v = lane; v < 256; v += 32) counts[warp][v] = 0;
    __syncwarp();
    if (tile >= tiles) return;
    u64 end = min((tile + 1) * TILE, (u64)m);
    for (u64 j = tile * TILE + lane; j < end; j += 32)
        atomicAdd(&counts[warp][digit(keys[j], d)], 1u);
    __syncwarp();
    for (u32 v = lane; v < 256; v += 32) hist[(u64)v * tiles + tile] = counts[warp][v];
}

// Exclusive scan of each block's SCAN_BLOCK * SCAN_ITEMS items of data (in place); the
// block's total goes to sums[blockIdx.x].
extern "C" __global__ void scan_blocks(u32 *data, u64 len, u32 *sums)
{
    __shared__ u32 warp_totals[SCAN_BLOCK / 32];
    u64 first = ((u64)blockIdx.x * SCAN_BLOCK + threadIdx.x) * SCAN_ITEMS;
    u32 items[SCAN_ITEMS];
    u32 mine = 0;
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        items[i] = first + i < len ? data[first + i] : 0;
        mine += items[i];
    }
    // Inclusive scan of the threads' sums: within the warp, then over the warps.
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 incl = mine;
    for (int o = 1; o < 32; o <<= 1) {
        u32 x = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += x;
    }
    if (lane == 31) warp_totals[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < SCAN_BLOCK / 32 ? warp_totals[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            u32 x = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += x;
        }
        if (lane < SCAN_BLOCK / 32) warp_totals[lane] = w;
    }
    __syncthreads();
    u32 running = incl - mine + (warp > 0 ? warp_totals[warp - 1] : 0);
    for (int i = 0; i < SCAN_ITEMS; ++i) {
        if (first + i < len) data[first + i] = running;
        running += items[i];
    }
    if (threadIdx.x == SCAN_BLOCK - 1) sums[blockIdx.x] = running;
}

// data[i] += offsets[block of i] (offsets: the scanned sums of scan_blocks).
extern "C" __global__ void add_block_offsets(u32 *data, u64 len, const u32 *__restrict__ offsets)
{
    u64 per_block = (u64)SCAN_BLOCK * SCAN_ITEMS;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride)
        data[i] += offsets[i / per_block];
}

// Stable scatter by digit d: each tile (one warp) writes its keys, in order, from the scanned
// hist's slots of (digit, tile). Lanes with the same digit rank among themselves by lane.
extern "C" __global__ void scatter(const ulonglong2 *__restrict__ keys, const u64 *__restrict__ vals, u32 m, u32 d, u32 tiles,
                                   const u32 *__restrict__ offsets, ulonglong2 *keys_out, u64 *vals_out)
{
    __shared__ u32 next[TILE_WARPS][256];
    u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    u64 tile = (u64)blockIdx.x * TILE_WARPS + warp;
    if (tile >= tiles) return;
    for (u32 v = lane; v < 256; v += 32) next[warp][v] = offsets[(u64)v * tiles + tile];
    __syncwarp();
    u64 end = min((tile + 1) * TILE, (u64)m);
    for (u64 j0 = tile * TILE; j0 < end; j0 += 32) {
        u64 j = j0 + lane;
        bool valid = j < end;
        ulonglong2 key;
        u64 val = 0;
        u32 v = 256 + lane; // a value of its own for lanes past the end
        if (valid) {
            key = keys[j];
            val = vals[j];
            v = digit(key, d);
        }
        u32 peers = __match_any_sync(0xffffffffu, v);
        u32 rank = __popc(peers & ((1u << lane) - 1));
        if (valid) {
            u32 slot = next[warp][v] + rank;
            keys_out[slot] = key;
            vals_out[slot] = val;
        }
        __syncwarp();
        if (valid && lane == (u32)(__ffs(peers) - 1)) next[warp][v] += __popc(peers);
        __syncwarp();
    }
}

// out[j] = pos | BWT character (T[pos - 1], 0 for pos 0) << 62 | TIED if key j equals key j - 1.
extern "C" __global__ void finish(const u64 *__restrict__ t, const ulonglong2 *__restrict__ keys, const u64 *__restrict__ vals, u32 m, u64 *out)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += stride) {
        u64 p = vals[j];
        u64 c = p == 0 ? 0 : base_at(t, p - 1);
        bool tied = false;
        if (j > 0) {
            ulonglong2 a = keys[j - 1], b = keys[j];
            tied = a.x == b.x && a.y == b.y;
        }
        out[j] = p | c << 62 | (tied ? TIED : 0);
    }
}
