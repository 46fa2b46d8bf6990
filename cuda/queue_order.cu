// The team passes' queue order (level_order), appended to inexact_match.cu when the kernels are
// compiled (src/gpu/mod.rs, INEXACT_MATCH_CU); dev/tests/queue_order.rs builds it for the CPU.
//
// level_order: a team pass lasts until its last team ends, and a team takes the next read of
// the queue when its own ends, so a heavy read taken late makes the launch's tail while most
// SMs wait. order_by_weight sorts the queue heaviest first by its reads' weights (their root
// chains', which read_widths writes; dev/src/launch_tail.rs replays the launches this gives),
// in buckets of ORDER_BUCKET_BITS bits below a weight's highest bit (src/gpu/queue_order.rs is
// the same on the CPU); the reads of a bucket in any order. One block: a pass's queue holds at
// most a batch's reads. `ordered` is scratch of the queue's
// length (the next pass's queue, empty until this pass runs); the queue is sorted in place.
#define ORDER_BUCKET_BITS 4
#define ORDER_BUCKETS (32 << ORDER_BUCKET_BITS)

__device__ __forceinline__ u32 weight_bucket(u32 w)
{
    if (w < (1u << ORDER_BUCKET_BITS)) return w;
    int octave = 31 - __clz(w);
    return ((u32)(octave - ORDER_BUCKET_BITS + 1) << ORDER_BUCKET_BITS) + ((w >> (octave - ORDER_BUCKET_BITS)) & ((1u << ORDER_BUCKET_BITS) - 1));
}

extern "C" __global__ void __launch_bounds__(1024) order_by_weight(u32 *__restrict__ queue, const u32 *__restrict__ queue_counters,
    const u32 *__restrict__ weights, u32 *__restrict__ ordered)
{
    __shared__ u32 start[ORDER_BUCKETS];
    u32 n = queue_counters[0];
    for (u32 b = threadIdx.x; b < ORDER_BUCKETS; b += blockDim.x) start[b] = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&start[weight_bucket(weights[queue[i]])], 1u);
    __syncthreads();
    // Each bucket's first place, the heaviest bucket first.
    if (threadIdx.x == 0) {
        u32 sum = 0;
        for (int b = ORDER_BUCKETS - 1; b >= 0; --b) {
            u32 count = start[b];
            start[b] = sum;
            sum += count;
        }
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) ordered[atomicAdd(&start[weight_bucket(weights[queue[i]])], 1u)] = queue[i];
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) queue[i] = ordered[i];
}
