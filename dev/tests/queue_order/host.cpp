// cuda/queue_order.cu built for the CPU: order_by_weight runs as one thread of one block, so
// that dev/tests/queue_order.rs can check its order without a GPU.
//   host: reads from stdin "N Q", then N weights (one per read of the batch), then Q read
//   indices (the queue); prints the sorted queue on one line, then weight_bucket of each of
//   the weights on the next.
#include <cstdio>
#include <vector>

typedef unsigned int u32;
typedef unsigned long long u64;

#include "../cuda_on_cpu.h"
#include "queue_order.cu"

int main()
{
    u32 n, q;
    if (scanf("%u %u", &n, &q) != 2) return 2;
    std::vector<u32> weights(n), queue(q), ordered(q);
    for (u32 &w : weights)
        if (scanf("%u", &w) != 1) return 2;
    for (u32 &id : queue)
        if (scanf("%u", &id) != 1) return 2;
    u32 counters[2] = {q, 0};
    order_by_weight(queue.data(), counters, weights.data(), ordered.data());
    for (u32 id : queue) printf("%u ", id);
    printf("\n");
    for (u32 w : weights) printf("%u ", weight_bucket(w));
    printf("\n");
    return 0;
}
