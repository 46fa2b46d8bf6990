// inexact_match: BWA's aln search (bwt_cal_width + bwt_match_gap), one read per thread, a
// line-for-line port of src/aln/search.rs so the hits are those of the CPU oracle. Each
// thread owns a slice of global scratch: the D arrays and the score-ordered stack (one LIFO
// list per score, linked through the entry pool). The first pass gives every read a small
// stack; reads whose stack fills up are listed and searched again by inexact_retry, with
// fewer threads and a larger stack each. A read that outgrows that too, or whose hits do not
// fit its hit list, is flagged and aligned on the CPU instead, so no answer ever differs.

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

struct Entry {
    u32 info; // score << 21 | i
    u8 n_mm, n_gapo, n_gape, state;
    u16 n_ins, n_del;
    int last_diff_pos;
    int next; // next entry of the same score
    u64 k, l;
};

// bwt_aln1_t as in the .sai: the packed bit fields, then k and l.
struct Hit {
    u64 bits;
    u64 k, l;
};

struct Stack {
    Entry *pool;
    int *heads;
    int capacity, used, free_list, n_entries, best, n_buckets;
    bool overflow;
};

__device__ __forceinline__ int aln_score(int m, int o, int e, const GapOpt &opt)
{
    return m * opt.s_mm + o * opt.s_gapo + e * opt.s_gape;
}

__device__ void stack_push(Stack &st, const GapOpt &opt, int i, u64 k, u64 l, int n_mm, int n_gapo, int n_gape, int n_ins, int n_del, int state, bool is_diff)
{
    int score = aln_score(n_mm, n_gapo, n_gape, opt);
    int slot = st.free_list;
    if (slot != NO_ENTRY) st.free_list = st.pool[slot].next;
    else if (st.used < st.capacity) slot = st.used++;
    if (slot == NO_ENTRY || score >= st.n_buckets) {
        st.overflow = true;
        return;
    }
    Entry &e = st.pool[slot];
    e.info = (u32)score << 21 | (u32)i;
    e.n_mm = (u8)n_mm;
    e.n_gapo = (u8)n_gapo;
    e.n_gape = (u8)n_gape;
    e.state = (u8)state;
    e.n_ins = (u16)n_ins;
    e.n_del = (u16)n_del;
    e.last_diff_pos = is_diff ? i : 0;
    e.k = k;
    e.l = l;
    e.next = st.heads[score];
    st.heads[score] = slot;
    ++st.n_entries;
    if (st.best > score) st.best = score;
}

__device__ Entry stack_pop(Stack &st)
{
    int slot = st.heads[st.best];
    Entry e = st.pool[slot];
    st.heads[st.best] = e.next;
    st.pool[slot].next = st.free_list;
    st.free_list = slot;
    --st.n_entries;
    if (st.n_entries == 0) st.best = st.n_buckets;
    else if (st.heads[st.best] == NO_ENTRY) {
        int s = st.best + 1;
        while (s < st.n_buckets && st.heads[s] == NO_ENTRY) ++s;
        st.best = s;
    }
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
    st.n_entries = 0;
    st.n_buckets = n_buckets;
    st.best = n_buckets;
    st.overflow = false;
    for (int s = 0; s < n_buckets; ++s) st.heads[s] = NO_ENTRY;

    int n_aln = 0;
    bool gape_counts = (opt.mode & MODE_GAPE) != 0;
    int best_score = aln_score(opt.max_diff + 1, opt.max_gapo + 1, opt.max_gape + 1, opt);
    int max_diff = opt.max_diff;
    int best_cnt = 0;
    int n_amb = 0;
    for (int j = 0; j < len; ++j) n_amb += seq[j] > 3;
    if (n_amb > max_diff) return 0;
    stack_push(st, opt, len, 0, seq_len, 0, 0, 0, 0, 0, STATE_M, false);
    while (st.n_entries > 0 && !st.overflow) {
        if (st.n_entries > opt.max_entries) break;
        Entry e = stack_pop(st);
        u64 k = e.k, l = e.l;
        int i = e.info & 0xffff;
        if (!(opt.mode & MODE_NONSTOP) && (int)(e.info >> 21) > best_score + opt.s_mm) break;
        int m = max_diff - (e.n_mm + e.n_gapo);
        if (gape_counts) m -= e.n_gape;
        if (m < 0) continue;
        int m_seed = 0;
        if (use_seed) {
            m_seed = opt.max_seed_diff - (e.n_mm + e.n_gapo);
            if (gape_counts) m_seed -= e.n_gape;
        }
        if (i > 0 && m < width[i - 1].bid) continue;

        bool hit_found = i == 0;
        if (!hit_found && m == 0 && (e.state == STATE_M || gape_counts || e.n_gape == opt.max_gape)) {
            if (extend_exact(words, primary, l2, seq, i, k, l)) hit_found = true;
            else continue;
        }
        if (hit_found) {
            int score = aln_score(e.n_mm, e.n_gapo, e.n_gape, opt);
            if (n_aln == 0) {
                best_score = score;
                int best_diff = e.n_mm + e.n_gapo + (gape_counts ? e.n_gape : 0);
                if (!(opt.mode & MODE_NONSTOP)) max_diff = best_diff + 1 > opt.max_diff ? opt.max_diff : best_diff + 1;
            }
            if (score == best_score) best_cnt += (int)(l - k + 1);
            else if (best_cnt > opt.max_top2) break;
            bool seen = false;
            if (e.n_gapo) {
                for (int j = 0; j < n_aln; ++j)
                    if (hits[j].k == k && hits[j].l == l) seen = true;
            }
            if (!seen) {
                // gap_shadow
                u64 x = l - k + 1;
                u64 j = 0;
                for (int p = 0; p < e.last_diff_pos; ++p) {
                    if (width[p].w > x) width[p].w -= x;
                    else if (width[p].w == x) {
                        width[p].bid = 1;
                        width[p].w = seq_len - (++j);
                    }
                }
                if (n_aln == hits_per_read) return HITS_FULL;
                hits[n_aln].bits = (u64)e.n_mm | (u64)e.n_gapo << 8 | (u64)e.n_gape << 16 | ((u64)score & 0xfffff) << 24
                    | ((u64)e.n_ins & 0x3ff) << 44 | ((u64)e.n_del & 0x3ff) << 54;
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
        int gaps = (opt.mode & MODE_LOGGAP) ? int_log2(e.n_gape + e.n_gapo) / 2 + 1 : e.n_gapo + e.n_gape;
        if (allow_diff && i >= opt.indel_end_skip + gaps && len - i >= opt.indel_end_skip + gaps) {
            if (e.state == STATE_M) {
                if (e.n_gapo < opt.max_gapo) {
                    stack_push(st, opt, i, k, l, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins + 1, e.n_del, STATE_I, true);
                    for (int c = 0; c < 4; ++c) {
                        u64 nk = l2[c] + cnt_k[c] + 1, nl = l2[c] + cnt_l[c];
                        if (nk <= nl) stack_push(st, opt, i + 1, nk, nl, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins, e.n_del + 1, STATE_D, true);
                    }
                }
            } else if (e.state == STATE_I) {
                if (e.n_gape < opt.max_gape) stack_push(st, opt, i, k, l, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins + 1, e.n_del, STATE_I, true);
            } else if (e.state == STATE_D) {
                if (e.n_gape < opt.max_gape && (e.n_gape + e.n_gapo < max_diff || n_occ < (u64)opt.max_del_occ)) {
                    for (int c = 0; c < 4; ++c) {
                        u64 nk = l2[c] + cnt_k[c] + 1, nl = l2[c] + cnt_l[c];
                        if (nk <= nl) stack_push(st, opt, i + 1, nk, nl, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins, e.n_del + 1, STATE_D, true);
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
                if (nk <= nl) stack_push(st, opt, i, nk, nl, e.n_mm + is_mm, e.n_gapo, e.n_gape, e.n_ins, e.n_del, STATE_M, is_mm);
            }
        } else if (base < 4) {
            u64 nk = l2[base] + cnt_k[base] + 1, nl = l2[base] + cnt_l[base];
            if (nk <= nl) stack_push(st, opt, i, nk, nl, e.n_mm, e.n_gapo, e.n_gape, e.n_ins, e.n_del, STATE_M, false);
        }
    }
    return st.overflow ? STACK_FULL : n_aln;
}

// First pass: one read per thread. Reads whose stack fills up are appended to retry_reads
// (retry_counters[0] counts them) for inexact_retry; n_hits is -1 for a read without an answer.
extern "C" __global__ void __launch_bounds__(INEXACT_BLOCK_W) inexact_match(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    Entry *__restrict__ entry_pool, int *__restrict__ head_pool, int entries_per_thread, int n_buckets,
    Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    u32 *__restrict__ retry_reads, u32 *__restrict__ retry_counters, u32 first_read, u32 n_reads)
{
    u32 t = blockIdx.x * INEXACT_BLOCK_W + threadIdx.x;
    if (t >= n_reads) return;
    u32 r = first_read + t;
    int n = search_read(words, primary, seq_len, l2, *batch_opt, codes + code_start[r], read_len[r], read_max_diff[r], t,
        width_pool, seed_width_pool, seq_pool, max_len, entry_pool, head_pool, entries_per_thread, n_buckets,
        hit_pool + (u64)r * hits_per_read, hits_per_read);
    if (n == STACK_FULL) retry_reads[atomicAdd(&retry_counters[0], 1)] = r;
    n_hits[r] = n < 0 ? -1 : n;
}

// Second pass over the reads listed by inexact_match, with the larger stacks of fewer
// threads: each thread takes the next listed read (retry_counters[1] counts those taken) until
// none is left, so a few long searches do not hold up the rest.
extern "C" __global__ void __launch_bounds__(INEXACT_BLOCK_W) inexact_retry(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    Entry *__restrict__ entry_pool, int *__restrict__ head_pool, int entries_per_thread, int n_buckets,
    Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    u32 *__restrict__ retry_reads, u32 *__restrict__ retry_counters)
{
    u64 t = (u64)blockIdx.x * INEXACT_BLOCK_W + threadIdx.x;
    u32 listed = retry_counters[0];
    for (u32 p = atomicAdd(&retry_counters[1], 1); p < listed; p = atomicAdd(&retry_counters[1], 1)) {
        u32 r = retry_reads[p];
        int n = search_read(words, primary, seq_len, l2, *batch_opt, codes + code_start[r], read_len[r], read_max_diff[r], t,
            width_pool, seed_width_pool, seq_pool, max_len, entry_pool, head_pool, entries_per_thread, n_buckets,
            hit_pool + (u64)r * hits_per_read, hits_per_read);
        n_hits[r] = n < 0 ? -1 : n;
    }
}
