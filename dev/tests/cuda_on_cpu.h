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
// A launch of `blocks` blocks of `threads` threads, one after another from the last: work the
// threads claim with atomics then lands out of order, as it may on a GPU.
template <class Kernel> static void launch_last_first(unsigned blocks, unsigned threads, Kernel kernel)
{
    blockDim.x = threads;
    gridDim.x = blocks;
    for (int b = (int)blocks - 1; b >= 0; --b) {
        blockIdx.x = b;
        for (int t = (int)threads - 1; t >= 0; --t) {
            threadIdx.x = t;
            kernel();
        }
    }
}
