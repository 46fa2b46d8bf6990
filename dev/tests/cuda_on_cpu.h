// CUDA's keywords and the few built-ins the kernels under test use, for building them as C++
// on the CPU: the qualifiers become nothing, a launch is a loop that sets blockIdx, and the
// atomics are plain updates (the threads run one after another).
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __launch_bounds__(...)
#define __popcll __builtin_popcountll
struct Dim {
    unsigned x;
};
struct uint4 {
    unsigned x, y, z, w;
};
static Dim blockIdx = {0}, blockDim = {1}, threadIdx = {0}, gridDim = {1};
static unsigned atomicAdd(unsigned *p, unsigned v)
{
    unsigned old = *p;
    *p += v;
    return old;
}
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    *p += v;
    return old;
}
static unsigned atomicMin(unsigned *p, unsigned v)
{
    unsigned old = *p;
    if (v < old) *p = v;
    return old;
}
static unsigned atomicMax(unsigned *p, unsigned v)
{
    unsigned old = *p;
    if (v > old) *p = v;
    return old;
}
static unsigned atomicExch(unsigned *p, unsigned v)
{
    unsigned old = *p;
    *p = v;
    return old;
}
// Shared memory and barriers for kernels run as one thread of one block.
#define __shared__ static
#define __syncthreads()
#define __clz __builtin_clz
// What cuda/inexact_match.cu needs besides (dev/tests/entry_points_kernel.rs builds it for a
// team of one lane): a warp's shuffles and votes over one lane are the lane's own values.
#define __noinline__
#define __popc __builtin_popcount
#define __clzll __builtin_clzll
#define __ffs __builtin_ffs
struct ulonglong2 {
    unsigned long long x, y;
};
static inline ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) { return {x, y}; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int) { return v; }
template <class T> static inline T __shfl_sync(unsigned, T v, int) { return v; }
template <class T> static inline T __shfl_up_sync(unsigned, T v, int) { return v; }
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int) { return v; }
static inline unsigned __ballot_sync(unsigned, int p) { return p ? 1u : 0u; }
static inline void __syncwarp(unsigned = 0xffffffffu) {}
static unsigned long long atomicMax(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    if (v > old) *p = v;
    return old;
}
template <class T> static inline T min(T a, T b) { return b < a ? b : a; }
template <class T> static inline T max(T a, T b) { return a < b ? b : a; }
