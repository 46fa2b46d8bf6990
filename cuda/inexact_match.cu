// inexact_match: BWA's aln search (bwt_cal_width + bwt_match_gap), one read per thread, a
// line-for-line port of src/aln/search.rs so the hits are those of the CPU oracle. Each
// thread owns a slice of global scratch: the D arrays and a bounded score-ordered stack (one
// LIFO list per score, linked through a fixed pool of entries; src/aln/stack.rs, BoundedStack,
// is the same stack in Rust and is checked against bwa's on the CPU). The stack keeps only the
// entries the search can still pop: when the pool is full it drops its highest score, and
// after the first hit everything above the last score bwa will pop. A read that needs a
// dropped entry stops with STACK_FULL and is listed for the next pass, which has fewer threads
// with larger pools; the driver runs up to three passes (src/gpu/inexact.rs), the last sized so
// that bwa's own -m limit is reached first.
//
// Threads take reads from a queue (an atomic counter), so a thread that finishes a short read
// starts the next one instead of waiting for the longest read of its warp. inexact_order puts
// the reads without an exact match (exact_match's answer) first: the long searches are among
// them, and started first they do not trail at the end.

#define STATE_M 0
#define STATE_I 1
#define STATE_D 2
#define MODE_GAPE 0x01
#define MODE_LOGGAP 0x04
#define MODE_NONSTOP 0x10
#define NO_ENTRY -1
// search_read's answers besides a hit count.
#define STACK_FULL -1
#define HITS_FULL -2

// gap_opt_t, field for field (fnr is carried as a float's bits).
struct GapOpt {
    int s_mm, s_gapo, s_gape, mode, indel_end_skip, max_del_occ, max_entries, fnr_bits;
    int max_diff, max_gapo, max_gape, max_seed_diff, seed_len, n_threads, max_top2, trim_qual;
};

struct Width {
    u64 w;
    int bid;
};

// A stack entry in 32 bytes: the interval, the packed score and position, the list link and
// the counters (n_mm, n_gapo, n_gape, state | n_ins, n_del, last_diff_pos).
struct Entry {
    u64 k, l;
    u32 info; // score << 21 | i
    int next; // next entry of the same score, or the next free slot
    u32 diffs; // n_mm | n_gapo << 8 | n_gape << 16 | state << 24
    u32 gaps; // n_ins | n_del << 10 | last_diff_pos << 20
};

// bwt_aln1_t as in the .sai: the packed bit fields, then k and l.
struct Hit {
    u64 bits;
    u64 k, l;
};

struct Stack {
    Entry *pool;
    int *heads;
    int capacity, used, free_list, n_buckets;
    int stored, best;
    int cap; // highest score stored; every dropped entry scores more
    u32 dropped;
};

__device__ __forceinline__ int aln_score(int m, int o, int e, const GapOpt &opt)
{
    return m * opt.s_mm + o * opt.s_gapo + e * opt.s_gape;
}

__device__ __forceinline__ int take_slot(Stack &st)
{
    int slot = st.free_list;
    if (slot != NO_ENTRY) st.free_list = st.pool[slot].next;
    else if (st.used < st.capacity) slot = st.used++;
    return slot;
}

// Drops every stored entry scoring more than `cap` (they stay counted) and lowers the cap.
__device__ void drop_above(Stack &st, int cap)
{
    for (int s = cap + 1; s <= st.cap; ++s) {
        int slot = st.heads[s];
        while (slot != NO_ENTRY) {
            int next = st.pool[slot].next;
            st.pool[slot].next = st.free_list;
            st.free_list = slot;
            --st.stored;
            ++st.dropped;
            slot = next;
        }
        st.heads[s] = NO_ENTRY;
    }
    st.cap = cap;
}

__device__ void stack_push(Stack &st, const GapOpt &opt, int i, u64 k, u64 l, int n_mm, int n_gapo, int n_gape, int n_ins, int n_del, int state, bool is_diff)
{
    int score = aln_score(n_mm, n_gapo, n_gape, opt);
    if (score > st.cap) {
        ++st.dropped;
        return;
    }
    int slot = take_slot(st);
    if (slot == NO_ENTRY) {
        // Full: drop the highest score stored (with the new entry if it scores as much).
        int highest = st.cap;
        while (st.heads[highest] == NO_ENTRY) --highest;
        if (score >= highest) {
            drop_above(st, score - 1);
            ++st.dropped;
            return;
        }
        drop_above(st, highest - 1);
        slot = take_slot(st);
    }
    Entry &e = st.pool[slot];
    e.k = k;
    e.l = l;
    e.info = (u32)score << 21 | (u32)i;
    e.diffs = (u32)n_mm | (u32)n_gapo << 8 | (u32)n_gape << 16 | (u32)state << 24;
    e.gaps = (u32)n_ins | (u32)n_del << 10 | (u32)(is_diff ? i : 0) << 20;
    e.next = st.heads[score];
    st.heads[score] = slot;
    ++st.stored;
    if (st.best > score) st.best = score;
}

// Pops the best entry; only while st.stored > 0.
__device__ Entry stack_pop(Stack &st)
{
    while (st.heads[st.best] == NO_ENTRY) ++st.best;
    int slot = st.heads[st.best];
    Entry e = st.pool[slot];
    st.heads[st.best] = e.next;
    st.pool[slot].next = st.free_list;
    st.free_list = slot;
    --st.stored;
    if (st.stored == 0) st.best = st.n_buckets;
    else while (st.heads[st.best] == NO_ENTRY) ++st.best;
    return e;
}

__device__ void cal_width(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u8 *s, int len, Width *width)
{
    int bid = 0;
    u64 k = 0, l = seq_len;
    for (int i = 0; i < len; ++i) {
        int c = s[i];
        if (c < 4) {
            u64 ok = occ(words, primary, k - 1, c);
            u64 ol = occ(words, primary, l, c);
            k = l2[c] + ok + 1;
            l = l2[c] + ol;
        }
        if (k > l || c > 3) {
            k = 0;
            l = seq_len;
            ++bid;
        }
        width[i].w = l - k + 1;
        width[i].bid = bid;
    }
    width[len].w = 0;
    width[len].bid = bid + 1;
}

__device__ bool extend_exact(const u32 *words, u64 primary, const u64 *l2, const u8 *s, int n, u64 &k0, u64 &l0)
{
    u64 k = k0, l = l0;
    for (int i = n - 1; i >= 0; --i) {
        int c = s[i];
        if (c > 3) return false;
        u64 ok = occ(words, primary, k - 1, c);
        u64 ol = occ(words, primary, l, c);
        k = l2[c] + ok + 1;
        l = l2[c] + ol;
        if (k > l) return false;
    }
    k0 = k;
    l0 = l;
    return true;
}

__device__ int int_log2(u32 v)
{
    return v == 0 ? 0 : 31 - __clz(v);
}

// Searches read r (`len` codes at `read`) with the scratch of thread slot t; writes its hits
// to `hits` and returns their number, or STACK_FULL / HITS_FULL when the read outgrows the
// stack or the hit list.
__device__ int search_read(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, GapOpt opt,
    const u8 *read, int len, int read_max_diff, u64 t, Width *width_pool, Width *seed_width_pool,
    u8 *seq_pool, int max_len, Entry *entry_pool, int *head_pool, int entries_per_thread, int n_buckets,
    Hit *hits, int hits_per_read)
{
    Width *width = width_pool + t * (max_len + 1);
    Width *seed_width = seed_width_pool + t * (max_len + 1);
    u8 *seq = seq_pool + t * max_len;
    // D arrays on the reversed read, then the search on its reverse complement.
    for (int j = 0; j < len; ++j) seq[j] = read[len - 1 - j];
    cal_width(words, primary, seq_len, l2, seq, len, width);
    opt.max_diff = read_max_diff;
    bool use_seed = opt.seed_len < len;
    if (use_seed) cal_width(words, primary, seq_len, l2, seq + (len - opt.seed_len), opt.seed_len, seed_width);
    else opt.seed_len = 0x7fffffff;
    for (int j = 0; j < len; ++j) seq[j] = seq[j] > 3 ? 4 : 3 - seq[j];

    Stack st;
    st.pool = entry_pool + t * entries_per_thread;
    st.heads = head_pool + t * n_buckets;
    st.capacity = entries_per_thread;
    st.used = 0;
    st.free_list = NO_ENTRY;
    st.n_buckets = n_buckets;
    st.stored = 0;
    st.best = n_buckets;
    st.cap = n_buckets - 1;
    st.dropped = 0;
    for (int s = 0; s < n_buckets; ++s) st.heads[s] = NO_ENTRY;

    int n_aln = 0;
    bool gape_counts = (opt.mode & MODE_GAPE) != 0;
    bool nonstop = (opt.mode & MODE_NONSTOP) != 0;
    int best_score = aln_score(opt.max_diff + 1, opt.max_gapo + 1, opt.max_gape + 1, opt);
    int max_diff = opt.max_diff;
    int best_cnt = 0;
    int n_amb = 0;
    for (int j = 0; j < len; ++j) n_amb += seq[j] > 3;
    if (n_amb > max_diff) return 0;
    stack_push(st, opt, len, 0, seq_len, 0, 0, 0, 0, 0, STATE_M, false);
    while (st.stored + st.dropped > 0) {
        if (st.stored + st.dropped > (u32)opt.max_entries) break;
        if (st.stored == 0) {
            // bwa would pop a dropped entry: fine if that ends the search, as it would.
            if (!nonstop && st.cap + 1 > best_score + opt.s_mm) break;
            return STACK_FULL;
        }
        Entry e = stack_pop(st);
        u64 k = e.k, l = e.l;
        int i = e.info & 0xffff;
        int n_mm = e.diffs & 0xff, n_gapo = e.diffs >> 8 & 0xff, n_gape = e.diffs >> 16 & 0xff, state = e.diffs >> 24;
        int n_ins = e.gaps & 0x3ff, n_del = e.gaps >> 10 & 0x3ff, last_diff_pos = e.gaps >> 20;
        if (!nonstop && (int)(e.info >> 21) > best_score + opt.s_mm) break;
        int m = max_diff - (n_mm + n_gapo);
        if (gape_counts) m -= n_gape;
        if (m < 0) continue;
        int m_seed = 0;
        if (use_seed) {
            m_seed = opt.max_seed_diff - (n_mm + n_gapo);
            if (gape_counts) m_seed -= n_gape;
        }
        if (i > 0 && m < width[i - 1].bid) continue;

        bool hit_found = i == 0;
        if (!hit_found && m == 0 && (state == STATE_M || gape_counts || n_gape == opt.max_gape)) {
            if (extend_exact(words, primary, l2, seq, i, k, l)) hit_found = true;
            else continue;
        }
        if (hit_found) {
            int score = aln_score(n_mm, n_gapo, n_gape, opt);
            if (n_aln == 0) {
                best_score = score;
                int best_diff = n_mm + n_gapo + (gape_counts ? n_gape : 0);
                if (!nonstop) {
                    max_diff = best_diff + 1 > opt.max_diff ? opt.max_diff : best_diff + 1;
                    // From here on bwa pops nothing scoring more than this.
                    if (best_score + opt.s_mm < st.cap) drop_above(st, best_score + opt.s_mm);
                }
            }
            if (score == best_score) best_cnt += (int)(l - k + 1);
            else if (best_cnt > opt.max_top2) break;
            bool seen = false;
            if (n_gapo) {
                for (int j = 0; j < n_aln; ++j)
                    if (hits[j].k == k && hits[j].l == l) seen = true;
            }
            if (!seen) {
                // gap_shadow
                u64 x = l - k + 1;
                u64 j = 0;
                for (int p = 0; p < last_diff_pos; ++p) {
                    if (width[p].w > x) width[p].w -= x;
                    else if (width[p].w == x) {
                        width[p].bid = 1;
                        width[p].w = seq_len - (++j);
                    }
                }
                if (n_aln == hits_per_read) return HITS_FULL;
                hits[n_aln].bits = (u64)n_mm | (u64)n_gapo << 8 | (u64)n_gape << 16 | ((u64)score & 0xfffff) << 24
                    | ((u64)n_ins & 0x3ff) << 44 | ((u64)n_del & 0x3ff) << 54;
                hits[n_aln].k = k;
                hits[n_aln].l = l;
                ++n_aln;
            }
            continue;
        }

        --i;
        u64 cnt_k[4], cnt_l[4];
        occ4(words, primary, k - 1, cnt_k);
        occ4(words, primary, l, cnt_l);
        u64 n_occ = l - k + 1;
        bool allow_diff = true, allow_m = true;
        if (i > 0) {
            int ii = i - (len - opt.seed_len);
            if (width[i - 1].bid > m - 1) allow_diff = false;
            else if (width[i - 1].bid == m - 1 && width[i].bid == m - 1 && width[i - 1].w == width[i].w) allow_m = false;
            if (use_seed && ii > 0) {
                if (seed_width[ii - 1].bid > m_seed - 1) allow_diff = false;
                else if (seed_width[ii - 1].bid == m_seed - 1 && seed_width[ii].bid == m_seed - 1 && seed_width[ii - 1].w == seed_width[ii].w) allow_m = false;
            }
        }
        int gaps = (opt.mode & MODE_LOGGAP) ? int_log2(n_gape + n_gapo) / 2 + 1 : n_gapo + n_gape;
        if (allow_diff && i >= opt.indel_end_skip + gaps && len - i >= opt.indel_end_skip + gaps) {
            if (state == STATE_M) {
                if (n_gapo < opt.max_gapo) {
                    stack_push(st, opt, i, k, l, n_mm, n_gapo + 1, n_gape, n_ins + 1, n_del, STATE_I, true);
                    for (int c = 0; c < 4; ++c) {
                        u64 nk = l2[c] + cnt_k[c] + 1, nl = l2[c] + cnt_l[c];
                        if (nk <= nl) stack_push(st, opt, i + 1, nk, nl, n_mm, n_gapo + 1, n_gape, n_ins, n_del + 1, STATE_D, true);
                    }
                }
            } else if (state == STATE_I) {
                if (n_gape < opt.max_gape) stack_push(st, opt, i, k, l, n_mm, n_gapo, n_gape + 1, n_ins + 1, n_del, STATE_I, true);
            } else if (state == STATE_D) {
                if (n_gape < opt.max_gape && (n_gape + n_gapo < max_diff || n_occ < (u64)opt.max_del_occ)) {
                    for (int c = 0; c < 4; ++c) {
                        u64 nk = l2[c] + cnt_k[c] + 1, nl = l2[c] + cnt_l[c];
                        if (nk <= nl) stack_push(st, opt, i + 1, nk, nl, n_mm, n_gapo, n_gape + 1, n_ins, n_del + 1, STATE_D, true);
                    }
                }
            }
        }
        int base = seq[i];
        if (allow_diff && allow_m) {
            for (int j = 1; j <= 4; ++j) {
                int c = (base + j) & 3;
                bool is_mm = j != 4 || base > 3;
                u64 nk = l2[c] + cnt_k[c] + 1, nl = l2[c] + cnt_l[c];
                if (nk <= nl) stack_push(st, opt, i, nk, nl, n_mm + is_mm, n_gapo, n_gape, n_ins, n_del, STATE_M, is_mm);
            }
        } else if (base < 4) {
            u64 nk = l2[base] + cnt_k[base] + 1, nl = l2[base] + cnt_l[base];
            if (nk <= nl) stack_push(st, opt, i, nk, nl, n_mm, n_gapo, n_gape, n_ins, n_del, STATE_M, false);
        }
    }
    return n_aln;
}

// One pass of the search: each thread takes the next read of `queue` (queue_counters[1]
// counts those taken, up to queue_counters[0]) until none is left. A read whose stack is too
// small is appended to `next_queue` (next_counters[0] counts them) for the next pass, with
// larger stacks (after the last pass, for the CPU); n_hits is negative (STACK_FULL, HITS_FULL)
// for a read without an answer.
extern "C" __global__ void __launch_bounds__(INEXACT_BLOCK_W) inexact_search(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    Entry *__restrict__ entry_pool, int *__restrict__ head_pool, int entries_per_thread, int n_buckets,
    Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    const u32 *__restrict__ queue, u32 *__restrict__ queue_counters, u32 *__restrict__ next_queue, u32 *__restrict__ next_counters)
{
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; // the last pass may run fewer threads than a block
    u32 queued = queue_counters[0];
    for (u32 p = atomicAdd(&queue_counters[1], 1); p < queued; p = atomicAdd(&queue_counters[1], 1)) {
        u32 r = queue[p];
        int n = search_read(words, primary, seq_len, l2, *batch_opt, codes + code_start[r], read_len[r], read_max_diff[r], t,
            width_pool, seed_width_pool, seq_pool, max_len, entry_pool, head_pool, entries_per_thread, n_buckets,
            hit_pool + (u64)r * hits_per_read, hits_per_read);
        if (n == STACK_FULL) next_queue[atomicAdd(&next_counters[0], 1)] = r;
        n_hits[r] = n;
    }
}

// The first pass's queue: the reads without an exact match (k > l, or an N: k = l = 0) first,
// then the rest, each group in any order. read_of[j] is inexact read j's index in the batch
// (exact_match's k and l are per batch read). queue_counters[0] becomes n.
extern "C" __global__ void inexact_order(const u64 *__restrict__ exact_k, const u64 *__restrict__ exact_l,
    const u32 *__restrict__ read_of, u32 n, u32 *__restrict__ queue, u32 *__restrict__ order_counters, u32 *__restrict__ queue_counters)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    u32 b = read_of[j];
    bool exact = exact_k[b] <= exact_l[b] && !(exact_k[b] == 0 && exact_l[b] == 0);
    if (exact) queue[n - 1 - atomicAdd(&order_counters[1], 1)] = j;
    else queue[atomicAdd(&order_counters[0], 1)] = j;
    if (j == 0) queue_counters[0] = n;
}
