// inexact_match: BWA's aln search (bwt_cal_width + bwt_match_gap), one read per thread, a
// line-for-line port of src/search/mod.rs so the hits are those of the CPU oracle. Each
// thread owns a slice of global scratch: the D arrays and a bounded score-ordered stack (one
// LIFO list per score, linked through a fixed pool of entries; src/search/stack.rs, BoundedStack,
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
// The searches' answers besides a hit count: the stack (or pass 1's pop budget) was too small,
// the hit list was, or bwa's -m limit may fall inside a group of chains (inexact_level).
#define STACK_FULL -1
#define HITS_FULL -2
#define ENTRIES_LIMIT -3
// What one step of the search leads to (Step in src/search/mod.rs).
#define STEP_DONE 0
#define STEP_HIT 1
#define STEP_EXPANDED 2
// What recording a hit leads to (AfterHit).
#define HIT_GO 0
#define HIT_FIRST 1
#define HIT_STOP 2
// Where a thread of pass 1 is with its read (first_lockstep).
#define PHASE_IDLE 0
#define PHASE_SEARCH 1
// The team passes (inexact_level): lanes of a warp, entries per chunk of a team's pool. Defined
// here, before any use, so that a patched line that uses them compiles wherever it lands. The
// most threads of a team, MAX_TEAM, is a switch (-D): it sets inexact_level's launch bounds.
#define LANES 32
#define CHUNK 64
#define FULL_MASK 0xffffffffu
// A team of one warp (MAX_TEAM 32) needs no shared memory: its lanes share values by shuffles,
// and __syncwarp orders their memory as the block's barrier does for larger teams (defined here
// for the reason above).
#define ONE_WARP_TEAM (MAX_TEAM == LANES)
// The team kernel's blocks that must fit on an SM at once (-D, from the switches), which caps
// its registers: more resident teams hide more of the lookups' latency. (Pass 1's are the
// autotune grammar's launch-bounds patch.)
#ifndef LEVEL_MIN_BLOCKS
#define LEVEL_MIN_BLOCKS 1
#endif
// The team passes run the root's chain on all lanes at once, from its intervals computed with
// the D arrays (-D, from the switches; run_root_chain).
#ifndef root_chain
#define root_chain 0
#endif
// A team's lanes take their level's next chain as soon as their own ends (level_refill, -D from
// the switches for the team passes that use it: run_segment).
#ifndef level_refill
#define level_refill 0
#endif
// Where a pop asks for the memory of its children's lookups ahead of time (-D, from the
// switches; prefetch_rows): 0 nowhere, 1 the matching child's into L1, 2 into L2, 3 every
// child's into L2.
#ifndef occ_prefetch
#define occ_prefetch 0
#endif
// Pushes above the pool's cap counted at the push instead of stored for the commit to drop,
// in the groups whose pushes cannot take bwa's stack past -m (-D, from the switches).
#ifndef drop_at_push
#define drop_at_push 0
#endif
// The team passes store each pop's gap children as one record, expanded into them when the
// search reaches their score (-D, from the switches, for the team kernels; level_pool.rs models
// it). Most gap children score above the last score bwa pops, so most records never are.
#ifndef gap_records
#define gap_records 0
#endif
// Which searches chain pops two at a time from the pair sectors (occ_pairs): 1 the teams of
// one warp (pass 2); 2 pass 1 too; 3 every team (pass 3's hold fewer registers a thread).
#ifndef occ_pairs
#define occ_pairs 0
#endif
#define PAIRS_IN_TEAMS (occ_pairs >= 3 || (occ_pairs >= 1 && ONE_WARP_TEAM))
#define PAIRS_IN_PASS_1 (occ_pairs >= 2)

// gap_opt_t, field for field (fnr is carried as a float's bits).
struct GapOpt {
    int s_mm, s_gapo, s_gape, mode, indel_end_skip, max_del_occ, max_entries, fnr_bits;
    int max_diff, max_gapo, max_gape, max_seed_diff, seed_len, n_threads, max_top2, trim_qual;
};

struct Width {
    u64 w;
    int bid;
};

// read_widths' D arrays pack a cell in a u64: w (an interval's size, under 2^48) and bid above.
#define WIDTH_BID_SHIFT 48
__device__ __forceinline__ u64 pack_width(u64 w, int bid) { return w | (u64)bid << WIDTH_BID_SHIFT; }
__device__ __forceinline__ Width unpack_width(u64 cell)
{
    Width x = {cell & ((1ULL << WIDTH_BID_SHIFT) - 1), (int)(cell >> WIDTH_BID_SHIFT)};
    return x;
}

// A stack entry: the interval, the packed score and position, the list link and the counters
// (diffs: n_mm | n_gapo << 8 | n_gape << 16 | state << 24; gaps: n_ins | n_del << 10 |
// last_diff_pos << 20). In 32 bytes, or with the switch compact_entry (-D) in 24: k and l take
// ROW_BITS bits each (suffix-array rows of a genome up to 8 Gbp; the host checks) and the
// counters ride in their top bits, so the stacks spread over a quarter less memory.
#define ROW_BITS 34
#define ROW_MASK ((1ULL << ROW_BITS) - 1)
#if compact_entry
struct Entry {
    u64 k_diffs; // k | diffs << ROW_BITS
    u64 l_gaps; // l | gaps << ROW_BITS
    u32 info; // score << 21 | i
    int next; // next entry of the same score, or the next free slot
};
__device__ __forceinline__ u64 entry_k(const Entry &e) { return e.k_diffs & ROW_MASK; }
__device__ __forceinline__ u64 entry_l(const Entry &e) { return e.l_gaps & ROW_MASK; }
__device__ __forceinline__ u32 entry_diffs(const Entry &e) { return (u32)(e.k_diffs >> ROW_BITS); }
__device__ __forceinline__ u32 entry_gaps(const Entry &e) { return (u32)(e.l_gaps >> ROW_BITS); }
#else
struct Entry {
    u64 k, l;
    u32 info; // score << 21 | i
    int next; // next entry of the same score, or the next free slot
    u32 diffs;
    u32 gaps;
};
__device__ __forceinline__ u64 entry_k(const Entry &e) { return e.k; }
__device__ __forceinline__ u64 entry_l(const Entry &e) { return e.l; }
__device__ __forceinline__ u32 entry_diffs(const Entry &e) { return e.diffs; }
__device__ __forceinline__ u32 entry_gaps(const Entry &e) { return e.gaps; }
#endif

// bwt_aln1_t as in the .sai: the packed bit fields, then k and l.
struct Hit {
    u64 bits;
    u64 k, l;
};

__device__ __forceinline__ int entry_score(const Entry &e) { return e.info >> 21; }
__device__ __forceinline__ int entry_i(const Entry &e) { return e.info & 0xffff; }
__device__ __forceinline__ int n_mm_of(const Entry &e) { return entry_diffs(e) & 0xff; }
__device__ __forceinline__ int n_gapo_of(const Entry &e) { return entry_diffs(e) >> 8 & 0xff; }
__device__ __forceinline__ int n_gape_of(const Entry &e) { return entry_diffs(e) >> 16 & 0xff; }
__device__ __forceinline__ int state_of(const Entry &e) { return entry_diffs(e) >> 24; }
__device__ __forceinline__ int n_ins_of(const Entry &e) { return entry_gaps(e) & 0x3ff; }
__device__ __forceinline__ int n_del_of(const Entry &e) { return entry_gaps(e) >> 10 & 0x3ff; }
__device__ __forceinline__ int last_diff_pos_of(const Entry &e) { return entry_gaps(e) >> 20; }
// A gap record (gap_records) keeps its parent's fields, its children's score and, in info's bits
// 16-20 (free: i takes 16), which children exist: bit 0 the insertion, bit 1 + c the deletion by
// base c. Its i is the parent's after the step (the insertion's; the deletions' is i + 1).
#define RECORD_SHIFT 16
__device__ __forceinline__ int record_mask(const Entry &e) { return (e.info >> RECORD_SHIFT) & 0x1f; }
// The entries an item of a level stands for: its children for a record, else 1.
__device__ __forceinline__ int item_entries(const Entry &e)
{
    int mask = record_mask(e);
    return mask ? __popc(mask) : 1;
}

// Pass 1's stack of one thread. With the switch stack_interleave (-D) the threads' stacks lie
// side by side, slot j of every thread together, so the threads of a warp at the same depth
// read and write the same lines; else each thread's stack is one block. With heads_shared
// (-D) the heads of its lists are in shared memory, head s of the block's threads side by
// side (a bank per thread): every push and pop reads and writes a head.
struct Stack {
    Entry *pool;
    int *heads;
    u64 stride; // between a thread's slots: 1, or the threads with stack_interleave
    u64 head_stride; // between its heads: 1, the threads (stack_interleave) or the block's (heads_shared)
    int capacity, used, free_list, n_buckets;
    int stored, best;
    int cap; // highest score stored; every dropped entry scores more
    u32 dropped;
    int pops, max_pops; // pass 1 hands a read on after max_pops pops
};


__device__ __forceinline__ int aln_score(int m, int o, int e, const GapOpt &opt)
{
    return m * opt.s_mm + o * opt.s_gapo + e * opt.s_gape;
}

// A thread's slot and the head of its list of score s.
__device__ __forceinline__ Entry &slot_entry(const Stack &st, int slot) { return st.pool[slot * st.stride]; }
__device__ __forceinline__ int &head(const Stack &st, int s) { return st.heads[s * st.head_stride]; }

__device__ __forceinline__ int take_slot(Stack &st)
{
    int slot = st.free_list;
    if (slot != NO_ENTRY) st.free_list = slot_entry(st, slot).next;
    else if (st.used < st.capacity) slot = st.used++; // guard
    return slot;
}

// Drops every stored entry scoring more than `cap` (they stay counted) and lowers the cap.
__device__ void drop_above(Stack &st, int cap)
{
    for (int s = cap + 1; s <= st.cap; ++s) {
        int slot = head(st, s);
        while (slot != NO_ENTRY) {
            int next = slot_entry(st, slot).next;
            slot_entry(st, slot).next = st.free_list;
            st.free_list = slot;
            --st.stored;
            ++st.dropped;
            slot = next;
        }
        head(st, s) = NO_ENTRY;
    }
    st.cap = cap;
}

__device__ Entry make_entry(const GapOpt &opt, int i, u64 k, u64 l, int n_mm, int n_gapo, int n_gape, int n_ins, int n_del, int state, bool is_diff)
{
    Entry e;
    u32 diffs = (u32)n_mm | (u32)n_gapo << 8 | (u32)n_gape << 16 | (u32)state << 24;
    u32 gaps = (u32)n_ins | (u32)n_del << 10 | (u32)(is_diff ? i : 0) << 20;
#if compact_entry
    e.k_diffs = k | (u64)diffs << ROW_BITS;
    e.l_gaps = l | (u64)gaps << ROW_BITS;
#else
    e.k = k;
    e.l = l;
    e.diffs = diffs;
    e.gaps = gaps;
#endif
    e.info = (u32)aln_score(n_mm, n_gapo, n_gape, opt) << 21 | (u32)i;
    e.next = NO_ENTRY;
    return e;
}

#if gap_records
// The record of a pop's gap children (gap_records): the parent's fields after the step, the
// children's score (their gap counts: child_gapo, child_gape) and which of them exist.
__device__ Entry gap_record(const GapOpt &opt, int i, u64 k, u64 l, int n_mm, int n_gapo, int n_gape, int n_ins, int n_del,
    int state, int child_gapo, int child_gape, int mask)
{
    Entry e = make_entry(opt, i, k, l, n_mm, n_gapo, n_gape, n_ins, n_del, state, false);
    e.info = (u32)aln_score(n_mm, child_gapo, child_gape, opt) << 21 | (u32)mask << RECORD_SHIFT | (u32)i;
    return e;
}
#endif

__device__ void stack_push(Stack &st, const Entry &child)
{
    int score = entry_score(child);
    if (score > st.cap) {
        ++st.dropped;
        return;
    }
    int slot = take_slot(st);
    if (slot == NO_ENTRY) {
        // Full: drop the highest score stored (with the new entry if it scores as much).
        int highest = st.cap;
        while (head(st, highest) == NO_ENTRY) --highest;
        if (score >= highest) {
            drop_above(st, score - 1);
            ++st.dropped;
            return;
        }
        drop_above(st, highest - 1);
        slot = take_slot(st);
    }
    Entry &e = slot_entry(st, slot);
    e = child;
    e.next = head(st, score);
    head(st, score) = slot;
    ++st.stored;
    if (st.best > score) st.best = score;
}

// Pops the best entry; only while st.stored > 0.
__device__ Entry stack_pop(Stack &st)
{
    while (head(st, st.best) == NO_ENTRY) ++st.best;
    int slot = head(st, st.best);
    Entry e = slot_entry(st, slot);
    head(st, st.best) = e.next;
    slot_entry(st, slot).next = st.free_list;
    st.free_list = slot;
    --st.stored;
    if (st.stored == 0) st.best = st.n_buckets;
    else while (head(st, st.best) == NO_ENTRY) ++st.best;
    return e;
}

// Where step() puts the children: the bounded stack (one thread per read).
struct StackSink {
    enum { records = 0 }; // step pushes gap children one by one
    Stack &st;
    __device__ void push(const Entry &e) { stack_push(st, e); }
};

// ---- Occurrence counts, with the tuning switches of the inexact kernels (InexactSwitches in
// src/gpu/switches.rs; all 0 by default, which is bwt.cuh's occ and occ4 unchanged):
//   occ_ldg         read a BWT block through __ldg, 16 bytes at a time, into registers;
//   occ_same_block  when rows k-1 and l fall in one 128-row block, read it once for both;
//   occ_unroll      count the four bases of a block in one unrolled pass over its words;
//   occ_singleton   an interval of one row reads one block and counts one base (below);
//   occ_sectors     `words` is the array of occurrence sectors (bwt.cuh), not bwa's.
// The search asks for rows k-1 and l together (occ_pair, occ4_pair), which return the blocks read.

// The 16 words of the block at `blk`, through the read-only data cache.
__device__ __forceinline__ void ldg_block(const u32 *blk, u32 *copy)
{
    for (int q = 0; q < 4; ++q) {
        uint4 v = __ldg((const uint4 *)blk + q);
        copy[4 * q] = v.x;
        copy[4 * q + 1] = v.y;
        copy[4 * q + 2] = v.z;
        copy[4 * q + 3] = v.w;
    }
}

// Occurrences of every base in the first n (1..128) bases of block `blk`, its counts included.
__device__ __forceinline__ void block_count4(const u32 *blk, u32 n, u64 cnt[4])
{
    for (int c = 0; c < 4; ++c) cnt[c] = (u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32);
#if occ_unroll
    // By bit planes: of the n bases, those with the high bit set are G or T, with the low bit
    // C or T, with both T; three popcounts a word give all four counts.
    u32 high = 0, low = 0, both = 0;
#pragma unroll
    for (u32 j = 0; j < 4; ++j) {
        u64 chunk = ((u64)blk[8 + 2 * j] << 32) | blk[9 + 2 * j];
        u32 left = n > 32 * j ? n - 32 * j : 0;
        u64 keep = left >= 32 ? ~0ULL : (left == 0 ? 0ULL : ~0ULL << (64 - 2 * left));
        u64 lo = chunk & LOW_BITS & keep, hi = (chunk >> 1) & LOW_BITS & keep;
        high += __popcll(hi);
        low += __popcll(lo);
        both += __popcll(hi & lo);
    }
    cnt[0] += n - high - low + both;
    cnt[1] += low - both;
    cnt[2] += high - both;
    cnt[3] += both;
#else
    for (int c = 0; c < 4; ++c) cnt[c] += count_in_block(blk, n, c);
#endif
}

// Occurrences of `c` in the first n bases of block `blk`, its count included.
__device__ __forceinline__ u64 block_count(const u32 *blk, u32 n, int c)
{
    return ((u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32)) + count_in_block(blk, n, c);
}

// Row k's place: its block's first word and the bases to count there (bwt.cuh's occ).
__device__ __forceinline__ u64 occ_row(u64 k, u64 primary, u32 &n)
{
    u64 x = k - (k >= primary ? 1 : 0);
    n = (u32)(x & 127) + 1;
    return (x >> 7) * OCC_BLOCK_WORDS;
}

// occ4 of one row (k == ~0 gives zeros).
__device__ __forceinline__ void occ4_one(const u32 *words, u64 primary, u64 k, u64 cnt[4])
{
#if occ_sectors
    sector_occ4(words, primary, k, cnt);
#elif occ_ldg
    if (k == ~0ULL) {
        cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
        return;
    }
    u32 n;
    u32 copy[16];
    ldg_block(words + occ_row(k, primary, n), copy);
    block_count4(copy, n, cnt);
#elif occ_unroll
    if (k == ~0ULL) {
        cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
        return;
    }
    // The block first: occ_row sets n, and a call's arguments have no order.
    u32 n;
    const u32 *blk = words + occ_row(k, primary, n);
    block_count4(blk, n, cnt);
#else
    occ4(words, primary, k, cnt);
#endif
}

// occ of `c` at one row (k == ~0 gives 0).
__device__ __forceinline__ u64 occ_one(const u32 *words, u64 primary, u64 k, int c)
{
#if occ_sectors
    if (k == ~0ULL) return 0;
    return sector_count(words, k - (k >= primary ? 1 : 0), c);
#elif occ_ldg
    if (k == ~0ULL) return 0;
    u32 n;
    u32 copy[16];
    ldg_block(words + occ_row(k, primary, n), copy);
    return block_count(copy, n, c);
#else
    return occ(words, primary, k, c);
#endif
}

// Whether rows k and l (k != ~0) count in the same block.
__device__ __forceinline__ bool same_block(u64 k, u64 l, u64 primary)
{
    return (k - (k >= primary ? 1 : 0)) >> 7 == (l - (l >= primary ? 1 : 0)) >> 7;
}

// The block of rows k and l when they share one (k != ~0), read once (into `copy` with
// occ_ldg), else null; nk and nl: the bases to count there for each row.
__device__ __forceinline__ const u32 *shared_block(const u32 *words, u64 primary, u64 k, u64 l, u32 &nk, u32 &nl, u32 *copy)
{
    if (k == ~0ULL || !same_block(k, l, primary)) return nullptr;
    const u32 *blk = words + occ_row(k, primary, nk);
    occ_row(l, primary, nl);
#if occ_ldg
    ldg_block(blk, copy);
    blk = copy;
#endif
    return blk;
}

// Asks for the memory that rows k and l's counts will read (k may be ~0), without waiting
// for it. A chain's next pop reads the matching child's rows at once, but the pop before it
// first pushes its other children: with the request made before the pushes, their work hides
// part of the lookup's latency. Only a hint: the counts read the same words either way.
__device__ __forceinline__ void prefetch_row(const u32 *words, u64 primary, u64 k)
{
    if (k == ~0ULL) return;
#if occ_sectors
    const void *p = sector_at(words, (k - (k >= primary ? 1 : 0)) / SECTOR_ROWS);
#else
    u32 n;
    const void *p = words + occ_row(k, primary, n);
#endif
#if occ_prefetch == 1
    asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
#elif occ_prefetch >= 2
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

__device__ __forceinline__ void prefetch_rows(const u32 *words, u64 primary, u64 k, u64 l)
{
    prefetch_row(words, primary, k);
    prefetch_row(words, primary, l);
}

// An interval of one row [l, l] (most of a search's pops, once its string occurs once in the
// genome): the counts before row l differ from row l's only in row l's own base (none at the
// primary row, $), so row l's block alone gives both rows' (occ_singleton). Row l is read
// first so that row k's block is read only where it is another row: the lanes of a team that
// hold wider intervals read it while the others wait, as they did for every lane before.
__device__ __forceinline__ bool is_singleton(u64 k, u64 l) { return k != ~0ULL && k + 1 == l; }

// The base at row l of the BWT (l not the primary row).
__device__ __forceinline__ int row_base(const u32 *words, u64 primary, u64 l)
{
    u64 x = l - (l > primary ? 1 : 0);
#if occ_sectors
    return sector_base(words, x);
#endif
    u32 pos = (u32)(x & 127);
    return words[(x >> 7) * OCC_BLOCK_WORDS + 8 + (pos >> 4)] >> (30 - 2 * (pos & 15)) & 3;
}

// occ4 of rows k and l (k is k-1 of the search's interval, so it may be ~0); returns the
// blocks read.
__device__ __forceinline__ u32 occ4_pair(const u32 *words, u64 primary, u64 k, u64 l, u64 cnt_k[4], u64 cnt_l[4])
{
#if occ_singleton
    occ4_one(words, primary, l, cnt_l);
    if (!is_singleton(k, l)) {
        occ4_one(words, primary, k, cnt_k);
        return 2;
    }
    int b = l == primary ? 4 : row_base(words, primary, l);
#pragma unroll
    for (int c = 0; c < 4; ++c) cnt_k[c] = cnt_l[c] - (c == b);
    return 1;
#endif
#if occ_same_block && !occ_sectors
    u32 nk, nl;
    u32 copy[16];
    const u32 *blk = shared_block(words, primary, k, l, nk, nl, copy);
    if (blk) {
        block_count4(blk, nk, cnt_k);
        block_count4(blk, nl, cnt_l);
        return 1;
    }
#endif
    occ4_one(words, primary, k, cnt_k);
    occ4_one(words, primary, l, cnt_l);
    return 2;
}

// occ of `c` at rows k and l (k may be ~0); returns the blocks read.
__device__ __forceinline__ u32 occ_pair(const u32 *words, u64 primary, u64 k, u64 l, int c, u64 &ok, u64 &ol)
{
#if occ_singleton
    ol = occ_one(words, primary, l, c);
    if (!is_singleton(k, l)) {
        ok = occ_one(words, primary, k, c);
        return 2;
    }
    ok = ol - (l != primary && row_base(words, primary, l) == c);
    return 1;
#endif
#if occ_same_block && !occ_sectors
    u32 nk, nl;
    u32 copy[16];
    const u32 *blk = shared_block(words, primary, k, l, nk, nl, copy);
    if (blk) {
        ok = block_count(blk, nk, c);
        ol = block_count(blk, nl, c);
        return 1;
    }
#endif
    ok = occ_one(words, primary, k, c);
    ol = occ_one(words, primary, l, c);
    return 2;
}

// One base of bwa's D array (bwt_cal_width): base c at position i of the reversed read, with
// the backward search's interval [k, l] and the count of exact pieces so far (bid).
__device__ __forceinline__ void width_step(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, int c, int i, u64 &k, u64 &l, int &bid, u64 *cells, u64 &lookups)
{
    if (c < 4) {
        u64 ok, ol;
        lookups += occ_pair(words, primary, k - 1, l, c, ok, ol);
        k = l2[c] + ok + 1;
        l = l2[c] + ol;
    }
    if (k > l || c > 3) {
        k = 0;
        l = seq_len;
        ++bid;
    }
    cells[i] = pack_width(l - k + 1, bid);
}

// bwt_cal_width on the first n bases of a read, reversed (the read's D array with n its length,
// the seed's with n the seed's length): n + 1 packed cells.
__device__ void cal_width(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u8 *read, int n, u64 *cells, u64 &lookups)
{
    int bid = 0;
    u64 k = 0, l = seq_len;
    for (int i = 0; i < n; ++i) width_step(words, primary, seq_len, l2, read[n - 1 - i], i, k, l, bid, cells, lookups);
    cells[n] = pack_width(0, bid + 1);
}

__device__ bool extend_exact(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u8 *s, int n, u64 &k0, u64 &l0, u64 &lookups)
{
    u64 k = k0, l = l0;
    int i = n - 1;
#if occ_pairs
    // Two bases a lookup from the pair sectors: y·x·w's interval from w's rows (bwt.cuh). Where
    // x·w is empty no row of w has pair (x, y), so y·x·w is empty too.
    const u64 *before = pair_header(words, seq_len);
    for (; i >= 1; i -= 2) {
        int x = s[i], y = s[i - 1];
        if (x > 3 || y > 3) return false;
        u64 start = l2[y] + before[4 * x + y];
        u64 nk = start + sector_pair_occ(words, seq_len, primary, k - 1, x, y) + 1;
        l = start + sector_pair_occ(words, seq_len, primary, l, x, y);
        k = nk;
        lookups += 2;
        if (k > l) return false;
    }
#endif
    for (; i >= 0; --i) {
        int c = s[i];
        if (c > 3) return false;
        u64 ok, ol;
        lookups += occ_pair(words, primary, k - 1, l, c, ok, ol);
        k = l2[c] + ok + 1;
        l = l2[c] + ol;
        if (k > l) return false;
    }
    k0 = k;
    l0 = l;
    return true;
}

// The root's chain of the search (its matching children one after another: the read's exact
// backward search, reverse complemented as the search runs it): the interval after d bases for
// d = 0..len, empty (k > l) from the first base that does not extend it.
// Returns the chain's weight: the sum of log2 of its intervals' rows after each base (while
// one holds a row), which says how long the read stays in repeats and so how long its search
// is (the team passes' queue order, level_order; `root_chain` in dev/src/stack_profile.rs).
__device__ u32 root_chain_intervals(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u8 *read, int len, ulonglong2 *out, u64 &lookups)
{
    u64 k = 0, l = seq_len;
    u32 weight = 0;
    out[0] = make_ulonglong2(k, l);
    for (int d = 0; d < len; ++d) {
        int c = read[d] > 3 ? 4 : 3 - read[d];
        if (c > 3) {
            k = 1;
            l = 0;
        } else if (k <= l) {
            u64 ok, ol;
            lookups += occ_pair(words, primary, k - 1, l, c, ok, ol);
            k = l2[c] + ok + 1;
            l = l2[c] + ol;
            if (k <= l) weight += 63 - __clzll(l - k + 1);
        }
        out[d + 1] = make_ulonglong2(k, l);
    }
    return weight;
}

__device__ int int_log2(u32 v)
{
    return v == 0 ? 0 : 31 - __clz(v);
}


// The read as the search sees it (Search in src/search/mod.rs): its reverse complement, the
// seed's D array, and the read's options.
struct Read {
    const u32 *words;
    u64 primary, seq_len;
    const u64 *l2;
    GapOpt opt;
    const u8 *seq;
    int len;
    const Width *seed_width;
    bool use_seed;
    u64 *lookups; // occurrence lookups (64-byte blocks) of this thread, counted for the summary
    const ulonglong2 *intervals; // the interval table (interval_table.cu) of strings under interval_depth bases
    int interval_depth;
#ifdef rungs
    // With the rungs: the team's -m guard counters while it counts entry points (before the
    // read's first hit, in the rung the guard serves; else null), and the read's own limit.
    u32 *guard;
    int full;
#endif
};

// Whether an entry that has matched `matched` bases holds its string in k's place (under the
// interval table's depth). Gap records keep their parent's interval, not its string, so a kernel
// built with them has no table (InexactSwitches::illegal) and leaves the table's paths out.
__device__ __forceinline__ bool holds_string_at(const Read &r, int matched)
{
#if gap_records
    return false;
#else
    return matched < r.interval_depth;
#endif
}

// The read's options and arrays once prepared (prepare_read).
__device__ Read read_view(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const ulonglong2 *intervals, int interval_depth,
    GapOpt opt, int len, int read_max_diff, const Width *seed_width, const u8 *seq, u64 &lookups)
{
    opt.max_diff = read_max_diff;
    bool use_seed = opt.seed_len < len;
    if (!use_seed) opt.seed_len = 0x7fffffff;
    Read r = {words, primary, seq_len, l2, opt, seq, len, seed_width, use_seed, &lookups, intervals, interval_depth};
    return r;
}

// bwa's preparation of a read (src/search/mod.rs, prepare_read), its D arrays computed before
// by read_widths (`cells`, `seed_cells`): the reverse complement the search runs on, and the
// searcher's own copy of the D arrays (a hit narrows the read's: record_hit). Threads
// first, first + step, ... share the work (a thread alone: 0, 1; a team: its lanes).
__device__ Read prepare_read(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const ulonglong2 *intervals, int interval_depth,
    GapOpt opt, const u8 *read, int len,
    int read_max_diff, const u64 *cells, const u64 *seed_cells, Width *width, Width *seed_width, u8 *seq, u64 &lookups, int first, int step)
{
    for (int j = first; j < len; j += step) seq[j] = read[len - 1 - j] > 3 ? 4 : 3 - read[len - 1 - j];
    for (int j = first; j <= len; j += step) width[j] = unpack_width(cells[j]);
    if (opt.seed_len < len) for (int j = first; j <= opt.seed_len; j += step) seed_width[j] = unpack_width(seed_cells[j]);
    return read_view(words, primary, seq_len, l2, intervals, interval_depth, opt, len, read_max_diff, seed_width, seq, lookups);
}

// The intervals of an interval's four one-base extensions c·w (bwa's backward search step).
struct Extensions {
    u64 k[4], l[4];
};

// From the BWT: two occurrence lookups, or one for an interval of one row (occ_singleton).
__device__ __forceinline__ void bwt_extensions(const Read &r, u64 k, u64 l, Extensions &ext)
{
    u64 cnt_k[4], cnt_l[4];
    *r.lookups += occ4_pair(r.words, r.primary, k - 1, l, cnt_k, cnt_l);
    for (int c = 0; c < 4; ++c) {
        ext.k[c] = r.l2[c] + cnt_k[c] + 1;
        ext.l[c] = r.l2[c] + cnt_l[c];
    }
}

// The matching child's extensions, found by its parent's lookup from the pair sectors
// (occ_pairs, bwt.cuh): a chain then waits on one lookup for every two pops. The caller pops
// the matching child next, passing these back.
struct Chained {
    Extensions ext;
    bool known;
};

// bwt_extensions of w = [k, l], and of x·w (the matching child's, x < 4) from the same rows.
__device__ __forceinline__ void bwt_pair_extensions(const Read &r, u64 k, u64 l, int x, Extensions &ext, Extensions &child)
{
    u64 cnt_k[4], cnt_l[4], pairs_k[4], pairs_l[4];
    sector_pair_occ4(r.words, r.seq_len, r.primary, k - 1, x, cnt_k, pairs_k);
    sector_pair_occ4(r.words, r.seq_len, r.primary, l, x, cnt_l, pairs_l);
    *r.lookups += 2;
    const u64 *before = pair_header(r.words, r.seq_len) + 4 * x;
    for (int c = 0; c < 4; ++c) {
        ext.k[c] = r.l2[c] + cnt_k[c] + 1;
        ext.l[c] = r.l2[c] + cnt_l[c];
        u64 start = r.l2[c] + before[c];
        child.k[c] = start + pairs_k[c] + 1;
        child.l[c] = start + pairs_l[c];
    }
}

// Where level d of the interval table starts (4 + 16 + ... + 4^(d-1) intervals before it).
__device__ __forceinline__ u64 table_level(int d) { return ((1ULL << (2 * d)) - 4) / 3; }

// From the table, for string w of `matched` bases: one 64-byte line.
__device__ __forceinline__ void string_extensions(const Read &r, int matched, u64 w, Extensions &ext)
{
    const ulonglong2 *table_line = r.intervals + table_level(matched + 1) + 4 * w;
    for (int c = 0; c < 4; ++c) {
        ulonglong2 pair = __ldg(table_line + c);
        ext.k[c] = pair.x;
        ext.l[c] = pair.y;
    }
    *r.lookups += 1;
}

// The k of string w of `matched` bases (the empty string's interval is the whole BWT).
__device__ __forceinline__ u64 string_k(const Read &r, int matched, u64 w)
{
    return matched == 0 ? 0 : __ldg(r.intervals + table_level(matched) + w).x;
}

// v[c] by selects: an array indexed by a base known only at run time (the read's next base,
// the mismatches after it) would live in local memory, a store and a load for every use; with
// selects the four extensions stay in registers.
__device__ __forceinline__ u64 pick4(const u64 v[4], int c)
{
    return c == 0 ? v[0] : c == 1 ? v[1] : c == 2 ? v[2] : v[3];
}

// What child c keeps in k's place: its string while it holds one, else its k.
__device__ __forceinline__ u64 child_field(const Extensions &ext, int c, u64 w, bool child_holds)
{
    return child_holds ? 4 * w + c : pick4(ext.k, c);
}

#if occ_prefetch
// The rows the children's pops will count from: the matching child's (the chain's next pop),
// and with occ_prefetch 3 every other child's too (popped later, if at all).
__device__ __forceinline__ void prefetch_children(const Read &r, const Extensions &ext, int base, bool allow_diff)
{
    for (int c = 0; c < 4; ++c) {
        bool wanted = c == base || (occ_prefetch == 3 && allow_diff);
        if (wanted && ext.k[c] <= ext.l[c]) prefetch_rows(r.words, r.primary, ext.k[c] - 1, ext.l[c]);
    }
}
#endif

__device__ bool too_many_ns(const Read &r, int max_diff)
{
    int n_amb = 0;
    for (int j = 0; j < r.len; ++j) n_amb += r.seq[j] > 3;
    return n_amb > max_diff;
}

#if gap_records
// The gap children that step pushes one by one, as one record (the same rules: an insertion and a
// deletion per child interval where a gap opens, the gap's extension in state I or D).
template <class Sink>
__device__ void push_gap_record(const Read &r, int i, u64 k, u64 l, const Extensions &ext, const Entry &e, int max_diff, Sink &sink)
{
    const GapOpt &opt = r.opt;
    int n_mm = n_mm_of(e), n_gapo = n_gapo_of(e), n_gape = n_gape_of(e), state = state_of(e);
    int n_ins = n_ins_of(e), n_del = n_del_of(e);
    int dels = 0;
    for (int c = 0; c < 4; ++c) dels |= (ext.k[c] <= ext.l[c]) << (1 + c);
    int mask = 0, child_gapo = n_gapo, child_gape = n_gape;
    if (state == STATE_M && n_gapo < opt.max_gapo) {
        mask = 1 | dels;
        child_gapo = n_gapo + 1;
    } else if (state == STATE_I && n_gape < opt.max_gape) {
        mask = 1;
        child_gape = n_gape + 1;
    } else if (state == STATE_D && n_gape < opt.max_gape && (n_gape + n_gapo < max_diff || l - k + 1 < (u64)opt.max_del_occ)) {
        mask = dels;
        child_gape = n_gape + 1;
    }
    if (mask) sink.push(gap_record(opt, i, k, l, n_mm, n_gapo, n_gape, n_ins, n_del, state, child_gapo, child_gape, mask));
}

// A record's children in push order, each to out(child): its parent's extensions looked up again
// for the deletions.
template <class Out>
__device__ void expand_record(const Read &r, const Entry &rec, Out out)
{
    const GapOpt &opt = r.opt;
    u64 k = entry_k(rec), l = entry_l(rec);
    int i = entry_i(rec), mask = record_mask(rec);
    int n_mm = n_mm_of(rec), n_gapo = n_gapo_of(rec), n_gape = n_gape_of(rec), state = state_of(rec);
    int n_ins = n_ins_of(rec), n_del = n_del_of(rec);
    int gapo = state == STATE_M ? n_gapo + 1 : n_gapo, gape = state == STATE_M ? n_gape : n_gape + 1;
    if (mask & 1) out(make_entry(opt, i, k, l, n_mm, gapo, gape, n_ins + 1, n_del, STATE_I, true));
    if (mask >> 1) {
        Extensions ext;
        bwt_extensions(r, k, l, ext);
        for (int c = 0; c < 4; ++c) {
            if (mask >> (1 + c) & 1) out(make_entry(opt, i + 1, ext.k[c], ext.l[c], n_mm, gapo, gape, n_ins, n_del + 1, STATE_D, true));
        }
    }
}
#endif

#ifdef rungs
// ---- The -m guard's entry points for a best hit of two mismatches (GuardWatch in
// src/search/m_guard.rs; cuda/m_guard.cuh has the bound). Before the read's first hit, in the rung
// of limit GUARD_RUNG, a team counts the children bwa's step would push with the read's own
// limit and the rung's does not, where they can pop: bwa pops nothing scoring more than its best
// hit before it, and under a best hit of two mismatches only strings of one and two mismatches
// push (d* + 1 = 3 mismatches score more, or have no difference left after the hit; a gap open
// costs more than 3 mismatches, which the bound asks). An entry point of one mismatch heads a
// chain of matching children with mismatching children of two; one of two heads a chain. None
// of no mismatch can occur under a best hit of two (the D array's bid is at most d*): one that
// does marks the read unprovable. Counting more is safe: the bound only grows.
// Counters: GUARD_POPS (the rung's pops, all of them), GUARD_UNPROVABLE, the bound's sum (a
// u64, GUARD_SUM); then rows of guard_row(len) ints: entry points of one and of two mismatches
// by read position, the strings of two mismatches born, the chain floors, and the strings of
// one mismatch alive (u64, two rows): GuardRows.
#define GUARD_RUNG 3
#define GUARD_POPS 0
#define GUARD_UNPROVABLE 1
#define GUARD_SUM 2
#define GUARD_HEAD 4
// Set by the team at the read's first hit: the count stops. The team's own, in shared memory
// (in the counters in global memory it measured the same); not kept in the read's state, which
// each chain would then copy.
__shared__ u32 guard_hit;
// A team's counters, even so that every team's u64s stay aligned.
#define GUARD_INTS(max_len) ((GUARD_HEAD + 6 * ((max_len) + 2) + 1) & ~1)
// A row of a read of len bases: len + 1 cells, even so that the u64 rows stay aligned.
__device__ __forceinline__ int guard_row(int len) { return (len + 2) & ~1; }
// rung_guard (a measurement hook): 0, no guard (the rungs' answers stand as their rule says); 1,
// the entry points counted but every answer taken as proved; 2, the guard with bwa's own D
// arrays; 3, and with the further D arrays where those leave the bound over -m; 4, 3's work with
// every answer taken.
#ifndef rung_guard
#define rung_guard 3
#endif

// The mismatching children of a pop whose next read base is `base` (all four at an N) that occur.
__device__ __forceinline__ u32 mismatch_children(const Extensions &ext, int base)
{
    u32 n = 0;
    for (int c = 0; c < 4; ++c) n += c != base && ext.k[c] <= ext.l[c];
    return n;
}

// Whether step's rules for a D array let a pop with m differences left push mismatches: its
// cell under the next base (`below`) leaves a difference, and not as the cell above it does.
__device__ __forceinline__ bool d_array_allows_mismatches(Width below, Width here, int m)
{
    return below.bid <= m - 1 && !(below.bid == m - 1 && here.bid == m - 1 && below.w == here.w);
}

// `kids` entry points (at most) of `child_mm` mismatches and no gap at read position p.
__device__ __forceinline__ void guard_count(const Read &r, int child_mm, int p, u32 kids)
{
    if (*(volatile u32 *)&guard_hit) return;
    if (child_mm == 1 || child_mm == 2) atomicAdd(r.guard + GUARD_HEAD + (child_mm - 1) * guard_row(r.len) + p, kids);
    else if (child_mm < 1) r.guard[GUARD_UNPROVABLE] = 1;
}
#endif

// One pop of bwt_match_gap's loop after its cut-offs (Search::step): checks entry e against the
// differences left and the D arrays, and expands it, pushing its children in bwa's order into
// `sink` but for the one that matches the read's next base (bwa pushes it last, so it is
// popped next), which goes to `matching`. On a hit, [hk, hl] is its SA interval.
// With PAIRS, `chain` holds e's extensions where its parent found them, and gets its matching
// child's where this pop can find them too (a compile-time choice: the chain's registers).
template <bool PAIRS, class Sink>
__device__ int step(const Read &r, const Entry &e, int max_diff, const Width *width, Sink &sink, u64 &hk, u64 &hl,
    Entry &matching, bool &has_matching, Chained &chain)
{
    const GapOpt &opt = r.opt;
    bool gape_counts = (opt.mode & MODE_GAPE) != 0;
    has_matching = false;
    bool known = PAIRS && chain.known;
    chain.known = false;
    u64 k = entry_k(e), l = entry_l(e);
    int i = entry_i(e);
    int n_mm = n_mm_of(e), n_gapo = n_gapo_of(e), n_gape = n_gape_of(e), state = state_of(e);
    int n_ins = n_ins_of(e), n_del = n_del_of(e);
    // An entry that has matched fewer bases than the table's depth holds its string in k's place.
    int matched = r.len - i - n_ins + n_del;
    bool holds_string = holds_string_at(r, matched);
    u64 field = k;
    int m = max_diff - (n_mm + n_gapo);
    if (gape_counts) m -= n_gape;
    if (m < 0) return STEP_DONE;
    int m_seed = 0;
    if (r.use_seed) {
        m_seed = opt.max_seed_diff - (n_mm + n_gapo);
        if (gape_counts) m_seed -= n_gape;
    }
    // The D arrays' cells this pop reads, asked for together: read where each is needed, they
    // were loads waited for one after another (4 % of pass 2's stall samples).
    Width here = i > 0 ? width[i - 1] : Width{0, 0}, below = i > 1 ? width[i - 2] : Width{0, 0};
    int ii = i - 1 - (r.len - opt.seed_len);
    bool seeded = r.use_seed && i > 1 && ii > 0;
    Width seed_below = seeded ? r.seed_width[ii - 1] : Width{0, 0}, seed_here = seeded ? r.seed_width[ii] : Width{0, 0};
    if (i > 0 && m < here.bid) {
#ifdef rungs
        // The read's own limit expands e: its matching child is an entry point (and so are its
        // mismatching children, uncounted: under a best hit of two mismatches only an entry of
        // two is cut off so, the D array's bid being at most two, and its mismatches push nothing).
        if (r.guard && n_gapo + n_gape == 0 && m + r.full - max_diff >= here.bid) guard_count(r, n_mm < 2 ? 0 : n_mm, i - 1, 1);
#endif
        return STEP_DONE;
    }

    // A hit: the whole read consumed, or the rest must match exactly.
    if (i == 0 || (m == 0 && (state == STATE_M || gape_counts || n_gape == opt.max_gape))) {
        if (holds_string) k = string_k(r, matched, field);
        if (known && i > 0) {
            // The first base's interval is among e's extensions.
            int c = r.seq[--i];
            if (c > 3) return STEP_DONE;
            k = pick4(chain.ext.k, c);
            l = pick4(chain.ext.l, c);
            if (k > l) return STEP_DONE;
        }
        if (i > 0 && !extend_exact(r.words, r.primary, r.seq_len, r.l2, r.seq, i, k, l, *r.lookups)) return STEP_DONE;
        hk = k;
        hl = l;
        return STEP_HIT;
    }

    --i;
    bool allow_diff = true, allow_m = true;
    if (i > 0) {
        if (below.bid > m - 1) allow_diff = false;
        else if (below.bid == m - 1 && here.bid == m - 1 && below.w == here.w) allow_m = false;
        if (seeded) {
            if (seed_below.bid > m_seed - 1) allow_diff = false;
            else if (seed_below.bid == m_seed - 1 && seed_here.bid == m_seed - 1 && seed_below.w == seed_here.w) allow_m = false;
        }
    }
    int base = r.seq[i];
#ifdef rungs
    // Mismatches the rung forbids and the read's own limit allows: the same rules with its
    // differences left (the seed's do not depend on the limit).
    bool guard_counts = r.guard && !(allow_diff && allow_m) && n_gapo + n_gape == 0 && d_array_allows_mismatches(below, here, m + r.full - max_diff)
        && (!seeded || d_array_allows_mismatches(seed_below, seed_here, m_seed));
#endif
#if MAX_TEAM > LANES
    if (!allow_diff && !holds_string) {
#ifdef rungs
        // The other bases' counts are not loaded here: every mismatch counted.
        if (guard_counts) guard_count(r, n_mm + 1, i, base > 3 ? 4 : 3);
#endif
        // No difference allowed here: only the matching child can follow, so count only its
        // base (most expanded pops of a search are so: 58 % on 20k reads at 200 Mbp). Only in
        // the kernels of larger teams: in pass 1 and pass 2's one-warp teams it was slower on
        // the H100 (their registers and the D array's load before the BWT's).
        if (base > 3) return STEP_EXPANDED;
        u64 nk, nl;
        if (known) {
            nk = pick4(chain.ext.k, base);
            nl = pick4(chain.ext.l, base);
        } else if (PAIRS && i > 0) {
            Extensions ext;
            bwt_pair_extensions(r, k, l, base, ext, chain.ext);
            chain.known = true;
            nk = pick4(ext.k, base);
            nl = pick4(ext.l, base);
        } else {
            u64 ok, ol;
            *r.lookups += occ_pair(r.words, r.primary, k - 1, l, base, ok, ol);
            nk = r.l2[base] + ok + 1;
            nl = r.l2[base] + ol;
        }
        if (nk <= nl) {
            matching = make_entry(opt, i, nk, nl, n_mm, n_gapo, n_gape, n_ins, n_del, STATE_M, false);
            has_matching = true;
        }
        chain.known = chain.known && has_matching;
        return STEP_EXPANDED;
    }
#endif
    Extensions ext;
    if (holds_string) string_extensions(r, matched, field, ext);
    else if (known) ext = chain.ext;
    else if (PAIRS && base < 4 && i > 0) {
        bwt_pair_extensions(r, k, l, base, ext, chain.ext);
        chain.known = true;
    } else bwt_extensions(r, k, l, ext);
#ifdef rungs
    if (guard_counts) guard_count(r, n_mm + 1, i, mismatch_children(ext, base));
#endif
#if occ_prefetch
    prefetch_children(r, ext, base, allow_diff);
#endif
    bool child_holds = holds_string && holds_string_at(r, matched + 1);
    int gaps = (opt.mode & MODE_LOGGAP) ? int_log2(n_gape + n_gapo) / 2 + 1 : n_gapo + n_gape;
    if (allow_diff && i >= opt.indel_end_skip + gaps && r.len - i >= opt.indel_end_skip + gaps) {
#if gap_records
        if (Sink::records) {
            push_gap_record(r, i, field, l, ext, e, max_diff, sink);
        } else
#endif
        if (state == STATE_M) {
            if (n_gapo < opt.max_gapo) {
                sink.push(make_entry(opt, i, field, l, n_mm, n_gapo + 1, n_gape, n_ins + 1, n_del, STATE_I, true));
                for (int c = 0; c < 4; ++c) {
                    if (ext.k[c] <= ext.l[c]) sink.push(make_entry(opt, i + 1, child_field(ext, c, field, child_holds), ext.l[c], n_mm, n_gapo + 1, n_gape, n_ins, n_del + 1, STATE_D, true));
                }
            }
        } else if (state == STATE_I) {
            if (n_gape < opt.max_gape) sink.push(make_entry(opt, i, field, l, n_mm, n_gapo, n_gape + 1, n_ins + 1, n_del, STATE_I, true));
        } else if (state == STATE_D) {
            if (n_gape < opt.max_gape && (n_gape + n_gapo < max_diff || l - (holds_string ? string_k(r, matched, field) : k) + 1 < (u64)opt.max_del_occ)) {
                for (int c = 0; c < 4; ++c) {
                    if (ext.k[c] <= ext.l[c]) sink.push(make_entry(opt, i + 1, child_field(ext, c, field, child_holds), ext.l[c], n_mm, n_gapo, n_gape + 1, n_ins, n_del + 1, STATE_D, true));
                }
            }
        }
    }
    // Mismatches, then the read's own base (popped first).
    if (allow_diff && allow_m) {
        for (int j = 1; j <= 4; ++j) {
            int c = (base + j) & 3;
            bool is_mm = j != 4 || base > 3;
            u64 child_l = pick4(ext.l, c);
            if (pick4(ext.k, c) > child_l) continue;
            Entry child = make_entry(opt, i, child_field(ext, c, field, child_holds), child_l, n_mm + is_mm, n_gapo, n_gape, n_ins, n_del, STATE_M, is_mm);
            if (is_mm) sink.push(child);
            else {
                matching = child;
                has_matching = true;
            }
        }
    } else if (base < 4) {
        u64 child_l = pick4(ext.l, base);
        if (pick4(ext.k, base) <= child_l) {
            matching = make_entry(opt, i, child_field(ext, base, field, child_holds), child_l, n_mm, n_gapo, n_gape, n_ins, n_del, STATE_M, false);
            has_matching = true;
        }
    }
    chain.known = chain.known && has_matching;
    return STEP_EXPANDED;
}

// step without a chain's extensions.
template <class Sink>
__device__ __forceinline__ int step(const Read &r, const Entry &e, int max_diff, const Width *width, Sink &sink, u64 &hk, u64 &hl,
    Entry &matching, bool &has_matching)
{
    Chained none;
    none.known = false;
    return step<false>(r, e, max_diff, width, sink, hk, hl, matching, has_matching, none);
}

// The hits found so far and the cut-offs they set (HitList in src/search/mod.rs).
struct HitList {
    Hit *hits;
    int n_aln, capacity;
    int best_score, best_cnt, max_diff;
};

__device__ HitList new_hit_list(const GapOpt &opt, Hit *hits, int capacity)
{
    HitList h = {hits, 0, capacity, aln_score(opt.max_diff + 1, opt.max_gapo + 1, opt.max_gape + 1, opt), 0, opt.max_diff};
    return h;
}

__device__ __forceinline__ bool ends_before(const HitList &h, int score, const GapOpt &opt)
{
    return !(opt.mode & MODE_NONSTOP) && score > h.best_score + opt.s_mm;
}

// Records entry e's hit [k, l] and narrows the D array as bwa's gap_shadow does; HIT_FULL when
// the hit list is full.
__device__ int record_hit(HitList &h, const Entry &e, u64 k, u64 l, Width *width, u64 seq_len, const GapOpt &opt)
{
    bool gape_counts = (opt.mode & MODE_GAPE) != 0;
    int n_mm = n_mm_of(e), n_gapo = n_gapo_of(e), n_gape = n_gape_of(e);
    int score = aln_score(n_mm, n_gapo, n_gape, opt);
    int after = HIT_GO;
    if (h.n_aln == 0) {
        h.best_score = score;
        int best_diff = n_mm + n_gapo + (gape_counts ? n_gape : 0);
        if (!(opt.mode & MODE_NONSTOP)) {
            h.max_diff = best_diff + 1 > opt.max_diff ? opt.max_diff : best_diff + 1;
            after = HIT_FIRST;
        }
    }
    if (score == h.best_score) h.best_cnt += (int)(l - k + 1);
    else if (h.best_cnt > opt.max_top2) return HIT_STOP;
    bool seen = false;
    if (n_gapo) {
        for (int j = 0; j < h.n_aln; ++j)
            if (h.hits[j].k == k && h.hits[j].l == l) seen = true;
    }
    if (!seen) {
        // gap_shadow
        u64 x = l - k + 1;
        u64 j = 0;
        for (int p = 0; p < last_diff_pos_of(e); ++p) {
            if (width[p].w > x) width[p].w -= x;
            else if (width[p].w == x) {
                width[p].bid = 1;
                width[p].w = seq_len - (++j);
            }
        }
        if (h.n_aln == h.capacity) return HITS_FULL; // guard
        h.hits[h.n_aln].bits = (u64)n_mm | (u64)n_gapo << 8 | (u64)n_gape << 16 | ((u64)score & 0xfffff) << 24
            | ((u64)n_ins_of(e) & 0x3ff) << 44 | ((u64)n_del_of(e) & 0x3ff) << 54;
        h.hits[h.n_aln].k = k;
        h.hits[h.n_aln].l = l;
        ++h.n_aln;
    }
    return after;
}

// Pass 1's search of one read by one thread with the bounded stack (match_gap in
// src/search/mod.rs with a BoundedStack), one pop at a time, so that the threads of a warp
// searching reads of different lengths stay in step (first_lockstep). SEARCH_GO: not done;
// else the read's answer (its hit count, STACK_FULL when it needs more stack or pops,
// HITS_FULL).
#define SEARCH_GO -4
struct Search {
    Stack st;
    HitList h;
    Entry e; // the matching child of the last pop, held in registers (held != 0)
    int held;
    Chained chain; // the held child's extensions, where its parent found them
};

__device__ int search_start(const Read &r, Search &s)
{
    if (too_many_ns(r, s.h.max_diff)) return 0;
    stack_push(s.st, make_entry(r.opt, r.len, 0, r.seq_len, 0, 0, 0, 0, 0, STATE_M, false));
    s.held = 0;
    s.chain.known = false;
    return SEARCH_GO;
}

// One turn of bwt_match_gap's loop. The matching child of a pop stays in registers: bwa pushes
// it last at its parent's score, the lowest stored, so it is the next pop (bwa's -m still
// counts it).
__device__ int search_pop(const Read &r, Width *width, Search &s)
{
    const GapOpt &opt = r.opt;
    Stack &st = s.st;
    HitList &h = s.h;
    if (st.stored + s.held + st.dropped == 0) return h.n_aln;
    if (st.stored + s.held + st.dropped > (u32)opt.max_entries) return h.n_aln;
    if (!s.held && st.stored == 0) {
        // bwa would pop a dropped entry: fine if that ends the search, as it would.
        if (ends_before(h, st.cap + 1, opt)) return h.n_aln;
        return STACK_FULL;
    }
    if (++st.pops > st.max_pops) return STACK_FULL; // guard
    if (s.held) s.held = 0;
    else {
        s.e = stack_pop(st);
        s.chain.known = false;
    }
    if (ends_before(h, entry_score(s.e), opt)) return h.n_aln;
    u64 hk, hl;
    Entry matching;
    bool has_matching;
    StackSink sink = {st};
    int next = step<PAIRS_IN_PASS_1>(r, s.e, h.max_diff, width, sink, hk, hl, matching, has_matching, s.chain);
    if (next == STEP_HIT) {
        int after = record_hit(h, s.e, hk, hl, width, r.seq_len, opt);
        if (after == HITS_FULL) return HITS_FULL;
        if (after == HIT_STOP) return h.n_aln;
        if (after == HIT_FIRST && h.best_score + opt.s_mm < st.cap) drop_above(st, h.best_score + opt.s_mm);
    } else if (next == STEP_EXPANDED && has_matching) {
        s.e = matching;
        s.held = 1;
    }
    return SEARCH_GO;
}

// A thread's empty stack of `entries` entries (pass 1).
__device__ Stack new_stack(Entry *entry_pool, int *head_pool, u64 t, int entries, int n_buckets, int max_pops)
{
    Stack st;
#if stack_interleave
    // Slot j of every thread side by side: a warp's threads at the same depth share lines.
    st.pool = entry_pool + t;
    st.heads = head_pool + t;
    st.stride = st.head_stride = (u64)gridDim.x * blockDim.x;
#else
    st.pool = entry_pool + t * entries;
    st.heads = head_pool + t * n_buckets;
    st.stride = st.head_stride = 1;
#endif
#if heads_shared
    extern __shared__ int block_heads[]; // n_buckets x blockDim.x, from the launch
    st.heads = block_heads + threadIdx.x;
    st.head_stride = blockDim.x;
#endif
    st.capacity = entries;
    st.used = 0;
    st.free_list = NO_ENTRY;
    st.n_buckets = n_buckets;
    st.stored = 0;
    st.best = n_buckets;
    st.cap = n_buckets - 1;
    st.dropped = 0;
    st.pops = 0;
    st.max_pops = max_pops;
    for (int s = 0; s < n_buckets; ++s) head(st, s) = NO_ENTRY;
    return st;
}

// aln's rule for pass 1, kept on the GPU across batches (src/gpu/first_pass.rs): once pass 1
// has handed on more than rule[RULE_PER_MILLE] thousandths of the reads it finished (from
// RULE_MIN_READS on), it gives up on every read, the ones it is searching at their next 64th
// pop, so that the teams search them all. A warp of pass 1 waits for its longest read, a team
// shares one read's work. rule[RULE_PER_MILLE] 0: off (autotune times each variant as it is).
#define RULE_PER_MILLE 0
#define RULE_GIVE_UP 1
#define RULE_FINISHED 2
#define RULE_HANDED_ON 3
#define RULE_MIN_READS 4096

__device__ __forceinline__ bool pass_one_gives_up(const unsigned long long *rule)
{
    return ((const volatile unsigned long long *)rule)[RULE_GIVE_UP] != 0;
}

// Whether pass 1 stops searching its read now: the rule has tripped (looked at every 64 pops).
__device__ __forceinline__ bool rule_stops(const Search &s, const unsigned long long *rule)
{
    return (s.st.pops & 63) == 0 && pass_one_gives_up(rule);
}

__device__ void count_for_rule(unsigned long long *rule, bool handed_on)
{
    unsigned long long per_mille = rule[RULE_PER_MILLE];
    if (per_mille == 0 || pass_one_gives_up(rule)) return;
    unsigned long long finished = atomicAdd(&rule[RULE_FINISHED], 1ULL) + 1;
    unsigned long long handed = handed_on ? atomicAdd(&rule[RULE_HANDED_ON], 1ULL) + 1 : ((volatile unsigned long long *)rule)[RULE_HANDED_ON];
    if (finished >= RULE_MIN_READS && handed * 1000 > per_mille * finished) rule[RULE_GIVE_UP] = 1;
}

// A read's answer from pass 1: its hit count, or STACK_FULL / HITS_FULL, and then it goes on
// to the next pass (a read with more hits than its slots too: the team passes keep long hit
// lists).
__device__ void record_answer(u32 id, int n, int *n_hits, u32 *next_queue, u32 *next_counters, unsigned long long *rule)
{
    bool handed_on = n == STACK_FULL || n == HITS_FULL;
    if (handed_on) next_queue[atomicAdd(&next_counters[0], 1)] = id;
    n_hits[id] = n;
    count_for_rule(rule, handed_on);
}

// The GPU's clock, in nanoseconds. A pass's blocks, and read_widths', add up how long each
// stayed on its SM (from its start to its last thread's end): with batches overlapping, kernel
// times say little of how much of the GPU a pass holds, and a team that waits on its longest
// chain holds its share of an SM all the same.
__device__ __forceinline__ u64 global_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// residence[0] sums the blocks' times on their SMs; [1] and [2] keep the launch's first start (as
// its complement, so that counters set to zero take it by atomicMax) and its last end: how much
// of its span a launch's blocks held tells its tail, where the blocks that drew the longest
// reads run on while the rest have ended.
__device__ __forceinline__ void add_residence(u64 started, unsigned long long *residence)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 ended = global_ns();
        atomicAdd(residence, (unsigned long long)(ended - started));
        atomicMax(residence + 1, (unsigned long long)~started);
        atomicMax(residence + 2, (unsigned long long)ended);
    }
}

#ifdef rungs
// The speculative ladder's rungs inside the team passes (BCUDA_TEST_LADDER=passes,2,3;
// src/gpu/rungs.rs): `rungs` holds the guesses, a bit each; read_max_diff a read's limit in its
// rung (low byte) and its own (the byte above). A search with the rung's limit stands where that
// limit is the read's own, where the passes give the read up (the CPU then searches it with its
// own), or where its first hit has fewer differences than the limit and scores under
// s_mm (limit + 1): bwa's first hit is then the same, and bwa's search after it is bounded
// alike. Else the read is searched again with the next guess, or its own limit. Where bwa's -m
// might have stopped bwa's search first, the -m guard (rung_guard_proves) sends the read on too.
#define RUNG_LIMIT(v) ((v) & 0xff)
__device__ __forceinline__ int hit_diffs(const Hit &h, const GapOpt &opt)
{
    return (int)(h.bits & 0xff) + (int)(h.bits >> 8 & 0xff) + ((opt.mode & MODE_GAPE) ? (int)(h.bits >> 16 & 0xff) : 0);
}
__device__ __forceinline__ int hit_score(const Hit &h) { return (int)(h.bits >> 24 & 0xfffff); }

// The rung after rung v: the next guess, or the read's own limit.
__device__ int rung_after(int v)
{
    int limit = v & 0xff, full = v >> 8;
    int next = full;
    for (int g = limit + 1; g < full; ++g) {
        if ((rungs >> g) & 1) {
            next = g;
            break;
        }
    }
    return next | full << 8;
}

// 0 where the rung's answer stands by the rule above, else the next rung.
__device__ int rung_next(int v, int n, const Hit &first, const GapOpt &opt)
{
    int limit = v & 0xff, full = v >> 8;
    if (full <= limit || n < 0) return 0;
    if (n > 0 && hit_diffs(first, opt) < limit && hit_score(first) < opt.s_mm * (limit + 1)) return 0;
    return rung_after(v);
}
#else
#define RUNG_LIMIT(v) (v)
#endif

// (Calls of functions that take `words` or `l2` stay on one line: autotune's bounds guards
// pass those pointers' bounds on by rewriting the call's line.)
// The D arrays of the batch's reads, before the search: threads 0..n-1 compute read j's D array
// into widths[code_start[j] + j ..] (its length + 1 cells), threads n..2n-1 the seed's of read j
// into seed_widths[j * seed_stride ..] (reads longer than the seed), with root_chain threads
// 2n..3n-1 the intervals of read j's root chain into root_intervals[code_start[j] + j ..] (its
// length + 1) and, with level_order, its weight into root_weights[j]. Each is a backward search of
// dependent occurrence lookups: on a searching team's first lane, with the team waiting, they
// took about a third of pass 2 (H100, 1 Gbp benchmark); here all reads' run at once.
extern "C" __global__ void __launch_bounds__(256) read_widths(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, u32 n, u64 *__restrict__ widths, u64 *__restrict__ seed_widths, int seed_stride,
    ulonglong2 *__restrict__ root_intervals, u32 *__restrict__ root_weights, unsigned long long *__restrict__ lookup_count,
    unsigned long long *__restrict__ resident_ns)
{
    u64 started = global_ns();
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    bool seed = t >= n;
    u32 id = seed ? t - n : t;
    u64 lookups = 0;
    if (id < n) {
        int len = read_len[id];
        int seed_len = batch_opt->seed_len;
        const u8 *read = codes + code_start[id];
        if (!seed) cal_width(words, primary, seq_len, l2, read, len, widths + code_start[id] + id, lookups);
        else if (seed_len < len) cal_width(words, primary, seq_len, l2, read, seed_len, seed_widths + (u64)id * seed_stride, lookups);
    }
#if root_chain
    // Threads 2n..3n-1: each read's root chain (run_root_chain), after its D array's place.
    if (t >= 2 * (u64)n && t < 3 * (u64)n) {
        u32 j = (u32)(t - 2 * (u64)n);
        u32 weight = root_chain_intervals(words, primary, seq_len, l2, codes + code_start[j], read_len[j], root_intervals + code_start[j] + j, lookups);
#if level_order
        root_weights[j] = weight;
#endif
    }
#endif
    for (int o = LANES / 2; o > 0; o /= 2) lookups += __shfl_down_sync(FULL_MASK, lookups, o);
    if (threadIdx.x % LANES == 0 && lookups) atomicAdd(lookup_count, (unsigned long long)lookups);
    add_residence(started, resident_ns);
}

// Pass 1: each thread takes the next read of `queue` (queue_counters[1] counts those taken, up
// to queue_counters[0]) until none is left, and searches it with its own bounded stack of
// `entries_per_thread` entries and at most `max_pops` pops (1 once aln's `rule` has tripped,
// above). A read that needs more is appended
// to `next_queue` (next_counters[0] counts them) for inexact_level; n_hits is negative (STACK_FULL,
// HITS_FULL) for a read without an answer.
extern "C" __global__ void __launch_bounds__(INEXACT_BLOCK_W) inexact_search(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const ulonglong2 *__restrict__ intervals, int interval_depth,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    const u64 *__restrict__ widths, const u64 *__restrict__ seed_widths, int seed_stride,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    Entry *__restrict__ entry_pool, int *__restrict__ head_pool, int entries_per_thread, int n_buckets, int max_pops, unsigned long long *rule,
    Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    const u32 *__restrict__ queue, u32 *__restrict__ queue_counters, u32 *__restrict__ next_queue, u32 *__restrict__ next_counters,
    unsigned long long *__restrict__ lookup_count, unsigned long long *__restrict__ resident_ns)
{
    u64 started = global_ns();
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 lookups = 0;
    Width *width = width_pool + t * (max_len + 1);
    Width *seed_width = seed_width_pool + t * (max_len + 1);
    u8 *seq = seq_pool + t * max_len;
    u32 queued = queue_counters[0];
#ifdef rungs
    // The rungs run in the team passes, which judge each read as its search ends.
    for (u32 p = atomicAdd(&queue_counters[1], 1); p < queued; p = atomicAdd(&queue_counters[1], 1)) {
        u32 id = queue[p];
        next_queue[atomicAdd(&next_counters[0], 1)] = id;
        n_hits[id] = STACK_FULL;
    }
    return;
#endif
#if first_lockstep
    // Every turn of the loop a thread does one pop of its read, or takes the next read when its
    // own is done, so the threads of a warp stay in step: a warp no longer waits for its
    // longest read before any thread starts another.
    GapOpt opt = *batch_opt;
    Search s;
    u32 id = 0;
    int phase = PHASE_IDLE, len = 0, max_diff = 0;
    for (;;) {
        if (phase == PHASE_IDLE) {
            u32 p = atomicAdd(&queue_counters[1], 1);
            if (p >= queued) break;
            id = queue[p];
            len = read_len[id];
            max_diff = RUNG_LIMIT(read_max_diff[id]);
            Read r = prepare_read(words, primary, seq_len, l2, intervals, interval_depth, opt, codes + code_start[id], len, max_diff, widths + code_start[id] + id, seed_widths + (u64)id * seed_stride, width, seed_width, seq, lookups, 0, 1);
            s.st = new_stack(entry_pool, head_pool, t, entries_per_thread, n_buckets, pass_one_gives_up(rule) ? 1 : max_pops);
            s.h = new_hit_list(r.opt, hit_pool + (u64)id * hits_per_read, hits_per_read);
            int first = search_start(r, s);
            phase = PHASE_SEARCH;
            if (first != SEARCH_GO) {
                record_answer(id, first, n_hits, next_queue, next_counters, rule);
                phase = PHASE_IDLE;
            }
            continue;
        }
        Read r = read_view(words, primary, seq_len, l2, intervals, interval_depth, opt, len, max_diff, seed_width, seq, lookups);
        int n = search_pop(r, width, s);
        if (n == SEARCH_GO && rule_stops(s, rule)) n = STACK_FULL;
        if (n == SEARCH_GO) continue;
        record_answer(id, n, n_hits, next_queue, next_counters, rule);
        phase = PHASE_IDLE;
    }
#else
    // Each thread searches one read to its end before it takes the next.
    for (u32 p = atomicAdd(&queue_counters[1], 1); p < queued; p = atomicAdd(&queue_counters[1], 1)) {
        u32 id = queue[p];
        Read r = prepare_read(words, primary, seq_len, l2, intervals, interval_depth, *batch_opt, codes + code_start[id], read_len[id], RUNG_LIMIT(read_max_diff[id]), widths + code_start[id] + id, seed_widths + (u64)id * seed_stride, width, seed_width, seq, lookups, 0, 1);
        Search s;
        s.st = new_stack(entry_pool, head_pool, t, entries_per_thread, n_buckets, pass_one_gives_up(rule) ? 1 : max_pops);
        s.h = new_hit_list(r.opt, hit_pool + (u64)id * hits_per_read, hits_per_read);
        int n = search_start(r, s);
        while (n == SEARCH_GO) {
            n = search_pop(r, width, s);
            if (n == SEARCH_GO && rule_stops(s, rule)) n = STACK_FULL;
        }
        record_answer(id, n, n_hits, next_queue, next_counters, rule);
    }
#endif
    if (lookups) atomicAdd(lookup_count, (unsigned long long)lookups);
    add_residence(started, resident_ns);
}

// ---- inexact_replay: bwa's search kept to the candidates' tree (src/search/replay.rs) ----
// The ladder (candidates.cu) found every alignment of a read within its last budget, and
// candidate_tree laid them out as bwa's search walks them. bwa's search with its stack, keeping
// a child only where the tree has it, pops the kept entries in bwa's order (a tree node's
// ancestors are tree nodes), and only hits change the cut-offs: so it records bwa's hits, in
// bwa's order, in a few pops a read. bwa's -m counts the entries the tree does not hold: the
// host sends only reads whose search -m cannot stop (candidate_exact_reads).
#define REPLAY_PENDING 0 // candidates.cu's CAND_PENDING
#define REPLAY_ANSWERED 1 // CAND_ANSWERED
// Scores the replay's stack tells apart (the budgets stay below).
#define REPLAY_SCORES 32
#define TREE_NONE 0xffffffffu

// candidates.cu's tree node: the link (read position 16 bits, gap state 2, string base 3, 4
// for none), first child and next sibling, relative to the read's first node.
struct TreeNode {
    u32 link, first_child, next_sibling;
};

// The base entry e's string starts with (bwa's search prepends): from the string it holds
// below the interval table's depth, else from which base's rows its interval lies in.
__device__ __forceinline__ int entry_base(const Read &r, const Entry &e)
{
    u64 k = entry_k(e);
    if (holds_string_at(r, r.len - entry_i(e) - n_ins_of(e) + n_del_of(e))) return (int)(k & 3);
    int c = 0;
    while (c < 3 && k > r.l2[c + 1]) ++c;
    return c;
}

// The child of tree node `parent` that entry x (a child of the parent's entry) is, or TREE_NONE.
__device__ u32 tree_child(const Read &r, const TreeNode *tree, u32 parent, const Entry &x)
{
    u32 i = (u32)entry_i(x), state = (u32)state_of(x);
    int base = -1;
    for (u32 c = tree[parent].first_child; c != TREE_NONE; c = tree[c].next_sibling) {
        u32 link = tree[c].link;
        if ((link & 0xffff) != i || (link >> 16 & 3) != state) continue;
        int linked = (int)(link >> 18);
        if (linked == 4) return c;
        if (base < 0) base = entry_base(r, x);
        if (linked == base) return c;
    }
    return TREE_NONE;
}

// Where step() puts the children in the replay: only the tree's, each in its node's slot (a
// node is pushed at most once), on its score's list.
struct TreeSink {
    enum { records = 0 }; // step pushes gap children one by one
    const Read &r;
    const TreeNode *tree;
    Entry *entries;
    int *heads;
    u32 parent;
    __device__ void push(const Entry &e)
    {
        u32 c = tree_child(r, tree, parent, e);
        if (c == TREE_NONE) return;
        int s = entry_score(e) < REPLAY_SCORES ? entry_score(e) : REPLAY_SCORES - 1;
        entries[c] = e;
        entries[c].next = heads[s];
        heads[s] = (int)c;
    }
};

// Whether tree node `node`'s one child is the entry's matching child at read position i - 1.
__device__ __forceinline__ bool only_matching_child(const Read &r, const TreeNode *tree, u32 node, int i)
{
    u32 c = tree[node].first_child;
    if (c == TREE_NONE || tree[c].next_sibling != TREE_NONE || i < 1) return false;
    return tree[c].link == ((u32)(i - 1) | (u32)STATE_M << 16 | (u32)r.seq[i - 1] << 18);
}

// A pop of the root's chain (no difference yet, no string held) where the tree keeps only the
// matching child: step()'s checks, and the child's interval from read_widths' root chain
// (`root`: the interval after d bases) instead of two lookups. The pops that may hit
// (i == 0, or no difference left) take step() itself.
__device__ bool chain_step(const Read &r, const Entry &e, int max_diff, const Width *width, const ulonglong2 *root,
    int &next, Entry &matching, bool &has_matching)
{
    int i = entry_i(e), m = max_diff;
    if (i == 0 || m <= 0 || holds_string_at(r, r.len - i)) return false;
    has_matching = false;
    next = STEP_DONE;
    if (m < width[i - 1].bid) return true;
    next = STEP_EXPANDED;
    ulonglong2 kl = root[r.len - i + 1];
    if (r.seq[i - 1] < 4 && kl.x <= kl.y) {
        matching = make_entry(r.opt, i - 1, kl.x, kl.y, 0, 0, 0, 0, 0, STATE_M, false);
        has_matching = true;
    }
    return true;
}

// bwa's search of read r kept to its tree: its hit count, or HITS_FULL. `root` (null: none)
// is the read's root chain, which spares the chain's lookups where the tree does not branch.
__device__ int replay_read(const Read &r, Width *width, const TreeNode *tree, Entry *entries, const ulonglong2 *root, HitList &h)
{
    if (too_many_ns(r, h.max_diff)) return 0;
    int heads[REPLAY_SCORES];
    for (int s = 0; s < REPLAY_SCORES; ++s) heads[s] = NO_ENTRY;
    Entry e = make_entry(r.opt, r.len, 0, r.seq_len, 0, 0, 0, 0, 0, STATE_M, false);
    u32 node = 0;
    bool held = true;
    for (;;) {
        if (!held) {
            int s = 0;
            while (s < REPLAY_SCORES && heads[s] == NO_ENTRY) ++s;
            if (s == REPLAY_SCORES) break;
            node = (u32)heads[s];
            e = entries[node];
            heads[s] = e.next;
        }
        held = false;
        if (ends_before(h, entry_score(e), r.opt)) break;
        u64 hk, hl;
        Entry matching;
        bool has_matching;
        TreeSink sink = {r, tree, entries, heads, node};
        int next;
        bool on_chain = root && entry_diffs(e) == 0 && only_matching_child(r, tree, node, entry_i(e));
        if (!on_chain || !chain_step(r, e, h.max_diff, width, root, next, matching, has_matching))
            next = step(r, e, h.max_diff, width, sink, hk, hl, matching, has_matching);
        if (next == STEP_HIT) {
            int after = record_hit(h, e, hk, hl, width, r.seq_len, r.opt);
            if (after == HITS_FULL) return HITS_FULL;
            if (after == HIT_STOP) break;
        } else if (next == STEP_EXPANDED && has_matching) {
            u32 c = tree_child(r, tree, node, matching);
            if (c != TREE_NONE) {
                e = matching;
                node = c;
                held = true;
            }
        }
    }
    return h.n_aln;
}

// The replay of the *n_listed reads of `list` (candidates.cu's): each read the ladder answered
// (status REPLAY_ANSWERED) gets bwa's hits from its tree (tree + tree_start[id], its entries'
// slots at the same place of entry_pool); a read it did not, or with more hits than its slots,
// is appended to pass 1's queue. Threads and scratch as pass 1's, before it. With root_chain,
// read_widths' root chains (root_intervals) spare the chains' lookups.
extern "C" __global__ void __launch_bounds__(INEXACT_BLOCK_W) inexact_replay(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const ulonglong2 *__restrict__ intervals, int interval_depth,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    const u64 *__restrict__ widths, const u64 *__restrict__ seed_widths, int seed_stride,
    const ulonglong2 *__restrict__ root_intervals,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    const u32 *__restrict__ list, const u32 *__restrict__ n_listed, const u8 *__restrict__ status,
    const TreeNode *__restrict__ tree, const u32 *__restrict__ tree_start, Entry *__restrict__ entry_pool,
    Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    u32 *__restrict__ queue, u32 *__restrict__ queue_counters, unsigned long long *__restrict__ lookup_count)
{
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x, threads = (u64)gridDim.x * blockDim.x;
    u64 lookups = 0;
    Width *width = width_pool + t * (max_len + 1);
    Width *seed_width = seed_width_pool + t * (max_len + 1);
    u8 *seq = seq_pool + t * max_len;
    u32 n = *n_listed;
    for (u64 k = t; k < n; k += threads) {
        u32 id = list[k];
        int got = STACK_FULL;
        if (status[id] == REPLAY_ANSWERED) {
            Read r = prepare_read(words, primary, seq_len, l2, intervals, interval_depth, *batch_opt, codes + code_start[id], read_len[id], read_max_diff[id], widths + code_start[id] + id, seed_widths + (u64)id * seed_stride, width, seed_width, seq, lookups, 0, 1);
            HitList h = new_hit_list(r.opt, hit_pool + (u64)id * hits_per_read, hits_per_read);
            u32 at = tree_start[id];
            const ulonglong2 *root = root_chain ? root_intervals + code_start[id] + id : 0;
            got = replay_read(r, width, tree + at, entry_pool + at, root, h);
        }
        if (got < 0) queue[atomicAdd(&queue_counters[0], 1)] = id;
        else n_hits[id] = got;
    }
    if (lookups) atomicAdd(lookup_count, (unsigned long long)lookups);
}

// ---- inexact_level: one team (a thread block) per read (src/search/level_search.rs is the same
// algorithm) ----
// bwa pops its lowest score first and every child scores more than its parent, but for the
// one that matches the read's next base, which bwa pushes last and so pops at once. So the
// entries of a score are all there when the search reaches it, each the start of a chain of
// matching children whose other children go to higher scores, popped last in first out.
// The team's threads (its lanes) run the level's next chains at once, each collecting its
// pushes in its own buffer; the chains up to the first that ends in a hit are committed in
// bwa's order, that hit is recorded, and the chains after it run again with the D array and
// cut-offs it changed. Pass 2 runs teams of one warp; pass 3, whose reads have levels of
// thousands of chains, larger teams.

// A team's lanes and the shared words its collective operations meet in (one per warp).
struct Team {
    int lane, size;
    int *shared;
};

// A lane's push buffer: its entry j at buf[j * step]. The team's lanes' buffers lie one after
// another (step 1) or, with lane_interleave, entry j of every lane side by side (step: the
// team's size), so that lanes reading their entry j at once read neighbouring entries.
struct LaneView {
    Entry *buf;
    u64 step;
    __device__ Entry &operator[](int j) const { return buf[j * step]; }
};

// Lane `lane`'s buffer among its team's at `lane_bufs` (`stride` entries a lane), from its entry
// `start` on.
__device__ __forceinline__ LaneView lane_view(Entry *lane_bufs, int lane, int stride, int start, const Team &t)
{
#if lane_interleave
    return {lane_bufs + lane + (u64)start * t.size, (u64)t.size};
#else
    return {lane_bufs + (u64)lane * stride + start, 1};
#endif
}

// Stores a pushed entry, which the commit reads back: with occ_l1 3 marked last to leave L1.
__device__ __forceinline__ void keep_in_l1(Entry *dst, const Entry &e)
{
#if occ_l1 == 3
    const u64 *w = (const u64 *)&e;
#pragma unroll
    for (int j = 0; j < (int)(sizeof(Entry) / 8); ++j)
        asm volatile("st.global.L1::evict_last.u64 [%0], %1;" : : "l"((u64 *)dst + j), "l"(w[j]) : "memory");
#else
    *dst = e;
#endif
}

// Where a lane's chain puts its children: the lane's own buffer. With entries_limit_exact each
// child keeps the pop of the chain that pushed it in its (otherwise unused) link.
struct LaneBuffer {
    enum { records = gap_records }; // step pushes a pop's gap children as one record
    LaneView buf;
    int n, pop;
    // With drop_at_push, pushes above `cap` are only counted, in `dropped`: the commit would
    // drop them (the cap never rises), and -m needs only their number. With gap_records, `n`
    // counts items and `entries` the entries they stand for.
    int cap = 0x7fffffff, dropped = 0, entries = 0;
    __device__ void push(const Entry &e)
    {
#if drop_at_push
        if (entry_score(e) > cap) {
            dropped += gap_records ? item_entries(e) : 1;
            return;
        }
#endif
#if gap_records
        entries += item_entries(e);
#endif
        Entry x = e;
#if entries_limit_exact
        x.next = pop;
#endif
        keep_in_l1(&buf[n], x);
        ++n;
    }
};

// A warp's sum and minimum: one instruction (REDUX) from sm_80 on, five shuffles before. The
// team passes take one or two at every group of chains and every score they commit.
__device__ __forceinline__ int warp_sum(int x)
{
#if __CUDA_ARCH__ >= 800
    return (int)__reduce_add_sync(FULL_MASK, (unsigned)x);
#else
    for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(FULL_MASK, x, d);
    return x;
#endif
}

__device__ __forceinline__ int warp_min(int x)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(FULL_MASK, x);
#else
    for (int d = 16; d > 0; d >>= 1) x = min(x, __shfl_xor_sync(FULL_MASK, x, d));
    return x;
#endif
}

// The sum of x over the team (every lane gets it).
__device__ int team_sum(const Team &t, int x)
{
    x = warp_sum(x);
    if (ONE_WARP_TEAM) {
        __syncwarp();
        return x;
    }
    if (t.lane % LANES == 0) t.shared[t.lane / LANES] = x;
    __syncthreads();
    int sum = 0;
    for (int w = 0; w < t.size / LANES; ++w) sum += t.shared[w];
    __syncthreads();
    return sum;
}

// The minimum of x over the team (every lane gets it).
__device__ int team_min(const Team &t, int x)
{
    x = warp_min(x);
    if (ONE_WARP_TEAM) {
        __syncwarp();
        return x;
    }
    if (t.lane % LANES == 0) t.shared[t.lane / LANES] = x;
    __syncthreads();
    int lowest = 0x7fffffff;
    for (int w = 0; w < t.size / LANES; ++w) lowest = min(lowest, t.shared[w]);
    __syncthreads();
    return lowest;
}

// The sum of x over the lanes before this one; `all`: over the team.
__device__ int team_prefix(const Team &t, int x, int &all)
{
    int lane = t.lane % LANES, warp = t.lane / LANES;
    int incl = x;
    for (int d = 1; d < LANES; d <<= 1) {
        int from = __shfl_up_sync(FULL_MASK, incl, d);
        if (lane >= d) incl += from;
    }
    if (ONE_WARP_TEAM) {
        all = __shfl_sync(FULL_MASK, incl, LANES - 1);
        __syncwarp();
        return incl - x;
    }
    if (lane == LANES - 1) t.shared[warp] = incl;
    __syncthreads();
    int before = 0;
    all = 0;
    for (int w = 0; w < t.size / LANES; ++w) {
        if (w < warp) before += t.shared[w];
        all += t.shared[w];
    }
    __syncthreads();
    return before + incl - x;
}

// Lane `from`'s x, for every lane.
__device__ int team_broadcast(const Team &t, int x, int from)
{
    if (ONE_WARP_TEAM) {
        __syncwarp();
        return __shfl_sync(FULL_MASK, x, from);
    }
    if (t.lane == from) t.shared[0] = x;
    __syncthreads();
    x = t.shared[0];
    __syncthreads();
    return x;
}

// A team's entries, per score in push order, in chunks of CHUNK entries from a fixed pool
// (Levels in level_search.rs). The counts below the pointers are the same in every lane.
struct Levels {
    Entry *pool;
    int *table; // n_buckets x max_chunks: each score's chunks, in order
    int *free_chunks; // a stack of free chunk ids
    int *len; // entries per score
#if gap_records
    int *with_records; // per score: whether a record was stored there since it was last expanded
#endif
    int max_chunks, n_buckets;
    int free_top, cap, stored;
    u32 dropped;
};

__device__ __forceinline__ Entry *level_entry(const Levels &lv, int s, int pos)
{
    return lv.pool + (u64)lv.table[s * lv.max_chunks + pos / CHUNK] * CHUNK + pos % CHUNK;
}

// Hands chunks from..to-1 of score s back to the pool.
__device__ void return_chunks(Levels &lv, int s, int from, int to, const Team &t)
{
    for (int j = t.lane; j < to - from; j += t.size) lv.free_chunks[lv.free_top + j] = lv.table[s * lv.max_chunks + from + j];
    lv.free_top += to - from;
    __syncthreads();
}

// Drops the entries of every score above `cap` (they stay counted) and frees their chunks.
__device__ void drop_levels_above(Levels &lv, int cap, const Team &t)
{
    for (int b = cap + 1; b <= lv.cap; ++b) {
        int len = lv.len[b];
        return_chunks(lv, b, 0, (len + CHUNK - 1) / CHUNK, t);
        lv.stored -= len;
        lv.dropped += len;
        if (t.lane == 0) lv.len[b] = 0;
        __syncthreads();
    }
    lv.cap = cap;
}

// The lowest score up to the cap with entries, or -1.
__device__ int lowest_level(const Levels &lv, const Team &t)
{
    for (int base = 0; base <= lv.cap; base += t.size) {
        int b = base + t.lane;
        int lowest = team_min(t, b <= lv.cap && lv.len[b] > 0 ? b : 0x7fffffff);
        if (lowest != 0x7fffffff) return lowest;
    }
    return -1;
}

// The highest score above `level` (up to the cap) with entries, or -1.
__device__ int highest_level_above(const Levels &lv, int level, const Team &t)
{
    for (int top = lv.cap; top > level; top -= t.size) {
        int b = top - t.lane;
        int highest = -team_min(t, b > level && lv.len[b] > 0 ? -b : 0x7fffffff);
        if (highest != -0x7fffffff) return highest;
    }
    return -1;
}

// A score among a lane's pushes, and how many of them have it.
struct ScoreCount {
    int score, count;
};

// Takes score s (of an entry up to the cap) into `low`, the lowest so far and its count.
__device__ __forceinline__ void keep_lowest(ScoreCount &low, int s)
{
    if (s < low.score) low = {s, 1};
    else if (s == low.score) ++low.count;
}

// Entries read a batch at a time by the passes over a lane's buffer in a commit.
#define SCORE_BATCH 8

// Calls visit(j, score of entry j) for a lane's n entries at `buf`, in push order. The scores of
// SCORE_BATCH entries are all asked for before any is used: one load after another, each
// waited for, took a fifth of pass 2's stalls.
template <class Visit>
__device__ __forceinline__ void for_each_score(const LaneView &buf, int n, Visit visit)
{
    for (int j0 = 0; j0 < n; j0 += SCORE_BATCH) {
        int scores[SCORE_BATCH];
#pragma unroll
        for (int u = 0; u < SCORE_BATCH; ++u) scores[u] = j0 + u < n ? entry_score(buf[j0 + u]) : 0;
#pragma unroll
        for (int u = 0; u < SCORE_BATCH; ++u) {
            if (j0 + u >= n) break;
            visit(j0 + u, scores[u]);
        }
    }
}

// The lowest score up to the cap among a lane's n entries at `buf` (INT_MAX when none), and how
// many of them are above the cap.
__device__ ScoreCount lowest_push_score(const LaneView &buf, int n, int cap, int &over_cap)
{
    ScoreCount low = {0x7fffffff, 0};
    for_each_score(buf, n, [&](int, int s) {
        if (s > cap) ++over_cap;
        else keep_lowest(low, s);
    });
    return low;
}

// Stores the n entries of score s at `buf` from `pos` on, in push order, and returns the
// position after them; takes the scores above s and up to the cap among them into `next`, the
// lowest and its count (so each score costs one pass over the buffer). A caller storing several
// buffers in turn hands each the position and `next` that the one before left.
__device__ int store_score(Levels &lv, int s, int pos, const LaneView &buf, int n, ScoreCount &next)
{
    for_each_score(buf, n, [&](int j, int e) {
        if (e == s) {
            Entry x = buf[j];
#if gap_records
            if (record_mask(x)) lv.with_records[s] = 1;
#endif
            *level_entry(lv, s, pos++) = x;
        } else if (e > s && e <= lv.cap) keep_lowest(next, e);
    });
    return pos;
}

// Makes room in the pool for `total` new entries at scores above `level`, and a chunk in
// reserve per score: drops the highest scores while the free chunks are short.
__device__ __forceinline__ void make_room(Levels &lv, int level, int total, const Team &t)
{
    int need = (total + CHUNK - 1) / CHUNK + lv.n_buckets;
    while (lv.free_top < need && lv.cap > level) {
        int highest = highest_level_above(lv, level, t);
        drop_levels_above(lv, highest > level ? highest - 1 : level, t);
    }
}

// Takes from the pool the chunks that `all` more entries of score s start (from its first
// chunk not yet taken on); returns where they go in the score's list.
__device__ __forceinline__ int claim_chunks(Levels &lv, int s, int all, const Team &t)
{
    int start = lv.len[s];
    int first_new = (start + CHUNK - 1) / CHUNK;
    int n_new = (start + all + CHUNK - 1) / CHUNK - first_new;
    for (int j = t.lane; j < n_new; j += t.size) lv.table[s * lv.max_chunks + first_new + j] = lv.free_chunks[lv.free_top - 1 - j];
    lv.free_top -= n_new;
    return start;
}

// Stores the pushes of lanes 0..n_lanes-1 (lane j's `n` entries in its buffer at bufs) in bwa's
// order, lane after lane and each lane's in its order, while the search is at `level`: first
// makes room, dropping the highest scores if the pool is short. A group's children take only a
// few scores (the level plus a mismatch, a gap open or a gap extension), so the lanes store one
// score at a time, all at once, lowest first: each lane's entries of that score go after those
// of the lanes before it (a prefix sum of the lanes' counts).
__device__ void commit_pushes(Levels &lv, int level, Entry *bufs, int stride, int n_lanes, int n, const Team &t, int pushed_all = -1, int entries = 0)
{
    if (t.lane >= n_lanes) n = 0;
    int total = team_sum(t, n);
#if gap_records
    // The entries the lanes' items stand for (`entries`, this lane's): what -m counts. The pool
    // counts items; the team passes use stored and dropped only as their sum and dropped's
    // being 0, so a record dropped as an item keeps both right.
    int stored_entries = team_sum(t, t.lane < n_lanes ? entries : 0);
#else
    int stored_entries = total;
#endif
#if drop_at_push
    // The lanes' pushes counted at the push: `pushed_all` holds them too.
    if (pushed_all > stored_entries) lv.dropped += pushed_all - stored_entries;
#endif
    make_room(lv, level, total, t);
    LaneView buf = lane_view(bufs, t.lane, stride, 0, t);
    int over_cap = 0;
    ScoreCount mine = lowest_push_score(buf, n, lv.cap, over_cap);
    over_cap = team_sum(t, over_cap);
    lv.dropped += over_cap;
    lv.stored += stored_entries - over_cap;
    for (int s = team_min(t, mine.score); s != 0x7fffffff; s = team_min(t, mine.score)) {
        int all;
        int pos = team_prefix(t, mine.score == s ? mine.count : 0, all);
        int start = claim_chunks(lv, s, all, t);
        __syncthreads();
        // A lane without entries of s keeps its lowest score, which is above s.
        if (mine.score == s) {
            ScoreCount next = {0x7fffffff, 0};
            store_score(lv, s, start + pos, buf, n, next);
            mine = next;
        }
        __syncthreads();
        if (t.lane == 0) lv.len[s] = start + all;
        __syncthreads();
    }
}

// Whether bwa's -m stops the search before a pop of this group of `committed` chains, which
// starts with `n_entries` entries on bwa's stack (entries_limit_inside in level_search.rs):
// bwa checks the count before every pop, and a pop takes one entry and adds its children, the
// matching one included (popped next). Each chain ends with its pushes added and its first
// entry taken, which gives the count at every chain's start (a prefix sum); each lane then
// follows its own chain pop by pop.
__device__ bool entries_limit_inside(u32 n_entries, const LaneBuffer &mine, int committed, int max_entries, const Team &t)
{
    bool mine_counts = t.lane < committed;
    int all;
    int pushes = gap_records ? mine.entries : mine.n;
    u64 n = n_entries + team_prefix(t, mine_counts ? pushes - 1 : 0, all); // at least 1: its chain's first entry
    int crossed = t.size;
    int j = 0;
    for (int p = 0; mine_counts && p < mine.pop; ++p) {
        if (n > (u64)max_entries) {
            crossed = t.lane;
            break;
        }
        int pushed = 0;
        while (j < mine.n && mine.buf[j].next == p) {
            pushed += gap_records ? item_entries(mine.buf[j]) : 1;
            ++j;
        }
        n = n - 1 + pushed + (p + 1 < mine.pop ? 1 : 0);
    }
    return team_min(t, crossed) < t.size;
}

// Records the hit that ended lane `hitter`'s chain (entry e, interval [hk, hl]) for the team, at
// `level`: SEARCH_GO, or the read's answer when the hit ends the search.
__device__ int record_team_hit(HitList &h, Levels &lv, int level, int hitter, const Entry &e, u64 hk, u64 hl, Width *width, const Read &r, const Team &t)
{
    const GapOpt &opt = r.opt;
#ifdef rungs
    // The -m guard's entry points count only before the read's first hit (the broadcasts'
    // barriers make this seen before the next pop).
    if (r.guard && t.lane == 0) guard_hit = 1;
#endif
    int after = 0;
    if (t.lane == hitter) after = record_hit(h, e, hk, hl, width, r.seq_len, opt);
    after = team_broadcast(t, after, hitter);
    h.n_aln = team_broadcast(t, h.n_aln, hitter);
    h.best_score = team_broadcast(t, h.best_score, hitter);
    h.best_cnt = team_broadcast(t, h.best_cnt, hitter);
    h.max_diff = team_broadcast(t, h.max_diff, hitter);
    if (after == HITS_FULL) return HITS_FULL;
    if (after == HIT_STOP) return h.n_aln;
    if (after == HIT_FIRST) {
        int last = max(h.best_score + opt.s_mm, level);
        if (last < lv.cap) drop_levels_above(lv, last, t);
    }
    return SEARCH_GO;
}

// What the root chain's entry at depth d keeps in k's place: its string while it holds one
// (the interval table), else k.
__device__ u64 root_field(const Read &r, int d, u64 k)
{
    if (!holds_string_at(r, d)) return k;
    u64 w = 0;
    for (int j = 0; j < d; ++j) w = 4 * w + r.seq[r.len - 1 - j];
    return w;
}

// The root's chain on all lanes at once (root_chain in level_search.rs): its intervals are known
// before the search (read_widths), so lane j of a round pops the chain's entry at depth base + j.
// The pops up to the first that does not lead on (no matching child, a hit, pruned) are the
// chain's: committed in order, as its pushes would be. bwa's -m cannot stop it (the caller
// checks), and it ends by its last depth. SEARCH_GO: the search goes on; else its answer.
__device__ int run_root_chain(const Read &r, Width *width, Levels &lv, HitList &h, Entry *lane_bufs, int stride, const ulonglong2 *root, int max_rounds, int &rounds, const Team &t)
{
    for (int base = 0; base <= r.len; base += t.size) {
        if (max_rounds > 0 && ++rounds > max_rounds) return STACK_FULL;
        int d = base + t.lane;
        LaneBuffer mine = {lane_view(lane_bufs, t.lane, stride, 0, t), 0, 0};
        int outcome = STEP_DONE;
        bool goes_on = false;
        u64 hk = 0, hl = 0;
        Entry e;
        ulonglong2 kl = d <= r.len ? root[d] : make_ulonglong2(1, 0);
        if (kl.x <= kl.y) {
            e = make_entry(r.opt, r.len - d, root_field(r, d, kl.x), kl.y, 0, 0, 0, 0, 0, STATE_M, false);
            Entry matching;
            outcome = step(r, e, h.max_diff, width, mine, hk, hl, matching, goes_on);
            mine.pop = 1;
#ifdef rungs
            if (r.guard) atomicAdd(r.guard + GUARD_POPS, 1u);
#endif
            goes_on = goes_on && outcome == STEP_EXPANDED;
        }
        int end = team_min(t, goes_on ? t.size : t.lane);
        commit_pushes(lv, 0, lane_bufs, stride, min(end + 1, t.size), mine.n, t, -1, mine.entries);
        if (end == t.size) continue;
        int hitter = team_min(t, t.lane == end && outcome == STEP_HIT ? t.lane : t.size);
        return hitter < t.size ? record_team_hit(h, lv, 0, hitter, e, hk, hl, width, r, t) : SEARCH_GO;
    }
    return SEARCH_GO;
}

#if level_refill
// ---- Segments (level_refill): a group of chains waits for its longest chain, while most lanes
// finish theirs sooner (the CPU model: 31-46 % of the lanes' pop-steps do work). In a segment
// each lane takes the level's next chain as soon as its own ends, up to SEG_CHAINS chains; the
// chains up to the first that ends in a hit are committed in bwa's order, as a group's are. Each
// committed chain ran with the state after every hit of the chains before it, so the hits are
// those of groups (level_search.rs runs segments too, and checks them against bwa).
#define SEG_CHAINS (4 * MAX_TEAM)
struct Segment {
    int taken, end; // chains taken so far; the first chain not to commit
    int start[SEG_CHAINS], n[SEG_CHAINS]; // chain q's pushes: where in its lane's buffer, how many
    unsigned short lane[SEG_CHAINS];
};

// The team's barrier: its warp's, or its block's.
__device__ __forceinline__ void team_sync()
{
    if (ONE_WARP_TEAM) __syncwarp();
    else __syncthreads();
}
// The block's (its one team's) segment.
__shared__ Segment team_segment;

// The hit that ends a lane's last chain of a segment, if any.
struct LaneHit {
    int chain; // in the segment, or SEG_CHAINS
    Entry e;
    u64 k, l;
};

// Runs chains next.. of `level` (n_chains in all), each lane taking the next one when its own
// ends; returns the chains to commit. A lane whose buffer cannot take a pop's pushes drops its
// chain, and the segment ends before it (the first chain always fits: every buffer is empty
// when it is taken).
__device__ int run_segment(const Read &r, Width *width, Levels &lv, int level, int n_chains, int next, HitList &h, LaneBuffer &mine, int stride, Segment *seg, LaneHit &hit, const Team &t)
{
    if (t.lane == 0) {
        seg->taken = 0;
        seg->end = min(n_chains - next, SEG_CHAINS);
    }
    team_sync();
    mine.n = 0;
    hit.chain = SEG_CHAINS;
    volatile int *end = &seg->end;
    for (int q = atomicAdd(&seg->taken, 1); q < *end; q = atomicAdd(&seg->taken, 1)) {
        Entry e = *level_entry(lv, level, n_chains - 1 - (next + q));
        int start = mine.n;
        bool hits = false, dropped = false;
        Chained chain;
        chain.known = false;
        while (true) {
            if (mine.n + 9 > stride || q >= *end) {
                dropped = true;
                break;
            }
            Entry matching;
            bool has_matching;
            u64 hk = 0, hl = 0;
            int next_step = step<PAIRS_IN_TEAMS>(r, e, h.max_diff, width, mine, hk, hl, matching, has_matching, chain);
            if (next_step == STEP_HIT) {
                hits = true;
                hit = {q, e, hk, hl};
            }
            if (next_step != STEP_EXPANDED || !has_matching) break;
            e = matching;
        }
        if (dropped) {
            atomicMin(&seg->end, q);
            mine.n = start;
            break;
        }
        seg->start[q] = start;
        seg->n[q] = mine.n - start;
        seg->lane[q] = (unsigned short)t.lane;
        if (hits) {
            atomicMin(&seg->end, q + 1);
            break;
        }
    }
    team_sync();
    return seg->end;
}

// The lowest of two (score, count)s, counts summed where the scores are the same.
__device__ __forceinline__ ScoreCount lower(ScoreCount a, ScoreCount b)
{
    if (a.score == b.score) return {a.score, a.count + b.count};
    return a.score < b.score ? a : b;
}

// Commits a segment's first `end` chains in order, as commit_pushes a group's lanes: lane j
// stores chains j * per .. (j + 1) * per - 1, so a prefix sum over the lanes is one over the
// chains.
__device__ void commit_segment(Levels &lv, int level, Entry *bufs, int stride, const Segment *seg, int end, const Team &t)
{
    int per = (end + t.size - 1) / t.size;
    int from = min(t.lane * per, end), to = min(from + per, end);
    int n = 0;
    for (int q = from; q < to; ++q) n += seg->n[q];
    int total = team_sum(t, n);
    make_room(lv, level, total, t);
    int over_cap = 0;
    ScoreCount mine = {0x7fffffff, 0};
    for (int q = from; q < to; ++q) mine = lower(mine, lowest_push_score(lane_view(bufs, seg->lane[q], stride, seg->start[q], t), seg->n[q], lv.cap, over_cap));
    over_cap = team_sum(t, over_cap);
    lv.dropped += over_cap;
    lv.stored += total - over_cap;
    for (int s = team_min(t, mine.score); s != 0x7fffffff; s = team_min(t, mine.score)) {
        int all;
        int pos = team_prefix(t, mine.score == s ? mine.count : 0, all);
        int start = claim_chunks(lv, s, all, t);
        team_sync();
        if (mine.score == s) {
            ScoreCount next = {0x7fffffff, 0};
            int at = start + pos;
            for (int q = from; q < to; ++q) {
                LaneView buf = lane_view(bufs, seg->lane[q], stride, seg->start[q], t);
                at = store_score(lv, s, at, buf, seg->n[q], next);
            }
            mine = next;
        }
        team_sync();
        if (t.lane == 0) lv.len[s] = start + all;
        team_sync();
    }
}

// The chains of `level` in segments (search_read_level's loop with level_refill): SEARCH_GO
// with `done` when the level is done, SEARCH_GO without it where bwa's -m might stop inside the
// next segment (the level goes on in groups from chain `next`, which find that pop), else the
// read's answer.
__device__ int run_level_segments(const Read &r, Width *width, Levels &lv, int level, HitList &h, Entry *lane_bufs, int stride, Segment *seg, int max_rounds, int &rounds, int &next, bool &done, const Team &t)
{
    int n_chains = lv.len[level];
    int held_chunks = (n_chains + CHUNK - 1) / CHUNK;
    LaneBuffer mine = {lane_view(lane_bufs, t.lane, stride, 0, t), 0, 0};
    // A segment pushes at most its lanes' buffers.
    u64 most_pushed = (u64)t.size * stride;
    for (next = 0; next < n_chains;) {
        if (lv.stored + lv.dropped + most_pushed + 1 > (u64)r.opt.max_entries) return SEARCH_GO;
        if (max_rounds > 0 && ++rounds > max_rounds) return STACK_FULL;
        LaneHit hit;
        int end = run_segment(r, width, lv, level, n_chains, next, h, mine, stride, seg, hit, t);
        commit_segment(lv, level, lane_bufs, stride, seg, end, t);
        lv.stored -= end;
        next += end;
        int needed_chunks = (n_chains - next + CHUNK - 1) / CHUNK;
        return_chunks(lv, level, needed_chunks, held_chunks, t);
        held_chunks = needed_chunks;
        int hitter = team_min(t, hit.chain == end - 1 ? t.lane : t.size);
        if (hitter < t.size) {
            int ended = record_team_hit(h, lv, level, hitter, hit.e, hit.k, hit.l, width, r, t);
            if (ended != SEARCH_GO) return ended;
        }
    }
    return_chunks(lv, level, 0, held_chunks, t);
    if (t.lane == 0) lv.len[level] = 0;
    team_sync();
    done = true;
    return SEARCH_GO;
}
#endif

#if gap_records
// Expands the records among level s's items into their children in their place (bwa's order)
// before its chains run, so that its chains are its entries, as without records. In place: the
// level takes only the chunks its entries add, so a pool that holds a search without records
// holds it with them. False where the pool cannot hold them even with every score above the
// level dropped (the read goes on to a larger pass).
__device__ bool expand_level(const Read &r, Levels &lv, int s, const Team &t)
{
    if (!lv.with_records[s]) return true;
    __syncthreads();
    if (t.lane == 0) lv.with_records[s] = 0;
    int n = lv.len[s];
    int entries = 0, records = 0;
    for (int j = t.lane; j < n; j += t.size) {
        Entry item = *level_entry(lv, s, j);
        entries += item_entries(item);
        records += record_mask(item) != 0;
    }
    int all = team_sum(t, entries);
    // Records counted, not entries against items: a record of one child (a gap's extension)
    // adds no entry, yet it must become its child.
    if (team_sum(t, records) == 0) return true;
    make_room(lv, s, all - n, t);
    if (lv.free_top < (all + CHUNK - 1) / CHUNK - (n + CHUNK - 1) / CHUNK) return false;
    claim_chunks(lv, s, all - n, t);
    __syncthreads();
    // Item j's entries go from E(j) on, the entries of the items before it: E(j) >= j. So the
    // items are taken from the last, a team's worth at a time, all read before any is written:
    // the writes then land on items already read or on free places.
    for (int j0 = (n - 1) / t.size * t.size, end = all; j0 >= 0; j0 -= t.size) {
        int j = j0 + t.lane, count = 0;
        Entry item;
        if (j < n) {
            item = *level_entry(lv, s, j);
            count = item_entries(item);
        }
        int sum, before = team_prefix(t, count, sum);
        __syncthreads();
        int pos = end - sum + before;
        if (j < n && record_mask(item)) expand_record(r, item, [&](const Entry &child) { *level_entry(lv, s, pos++) = child; });
        else if (j < n) *level_entry(lv, s, pos) = item;
        end -= sum;
        __syncthreads();
    }
    if (t.lane == 0) lv.len[s] = all;
    __syncthreads();
    return true;
}
#endif

// The search of one read by one team; STACK_FULL when it needs dropped entries or more than
// `max_rounds` groups of chains counted in `rounds` (0: no limit; a larger team then takes the
// read), ENTRIES_LIMIT when bwa's -m may stop it inside a group of chains (the CPU takes the read).
__device__ int search_read_level(const Read &r, Width *width, Levels &lv, HitList &h, Entry *lane_bufs, int stride, const ulonglong2 *root, int max_rounds, int &rounds, const Team &t)
{
    const GapOpt &opt = r.opt;
    if (too_many_ns(r, h.max_diff)) return 0;
    lv.free_top = lv.max_chunks;
    lv.cap = lv.n_buckets - 1;
    lv.stored = 0;
    lv.dropped = 0;
    for (int j = t.lane; j < lv.max_chunks; j += t.size) lv.free_chunks[j] = j;
    for (int b = t.lane; b < lv.n_buckets; b += t.size) lv.len[b] = 0;
#if gap_records
    for (int b = t.lane; b < lv.n_buckets; b += t.size) lv.with_records[b] = 0;
#endif
    __syncthreads();
    LaneBuffer mine = {lane_view(lane_bufs, t.lane, stride, 0, t), 0, 0};
#if root_chain
    if (opt.max_entries > 9 * (r.len + 1) + 1) {
        int ended = run_root_chain(r, width, lv, h, lane_bufs, stride, root, max_rounds, rounds, t);
        if (ended != SEARCH_GO) return ended;
    } else
#endif
    {
        if (t.lane == 0) mine.push(make_entry(opt, r.len, 0, r.seq_len, 0, 0, 0, 0, 0, STATE_M, false));
        commit_pushes(lv, 0, lane_bufs, stride, 1, mine.n, t, -1, mine.entries);
    }
    while (true) {
        int level = lowest_level(lv, t);
        if (level < 0) {
            if (lv.dropped == 0 || ends_before(h, lv.cap + 1, opt)) break;
            return STACK_FULL;
        }
        if (lv.stored + lv.dropped > (u32)opt.max_entries || ends_before(h, level, opt)) break;
        int first = 0; // the level's first chain not yet committed
#if gap_records
        if (!expand_level(r, lv, level, t)) return STACK_FULL;
#endif
#if level_refill
        bool level_done = false;
        int ended = run_level_segments(r, width, lv, level, h, lane_bufs, stride, &team_segment, max_rounds, rounds, first, level_done, t);
        if (ended != SEARCH_GO) return ended;
        if (level_done) continue;
#endif
        int n_chains = lv.len[level];
        // The chains are taken from the level's end, so its chunks go back to the pool as they
        // empty: a level of a million chains would otherwise keep its share of the pool while
        // its children arrive (a read of the 1 Gbp benchmark outgrew pass 3's pool so).
        int held_chunks = (n_chains - first + CHUNK - 1) / CHUNK;
        for (int next = first; next < n_chains;) {
            if (max_rounds > 0 && ++rounds > max_rounds) return STACK_FULL;
            int c = next + t.lane;
            mine.n = 0;
            mine.pop = 0;
            mine.entries = 0;
#if drop_at_push
            // Where the group's pushes (at most a buffer a lane) cannot reach -m, entries_limit_inside
            // is not needed, which is what reads the pushes one by one.
            mine.dropped = 0;
            mine.cap = (u64)lv.stored + lv.dropped + (u64)t.size * stride + 1 <= (u64)opt.max_entries ? lv.cap : 0x7fffffff;
#endif
            bool hit = false;
            u64 hk = 0, hl = 0;
            Entry hit_entry;
            if (c < n_chains) {
                Entry e = *level_entry(lv, level, n_chains - 1 - c);
                Chained chain;
                chain.known = false;
                while (true) {
                    Entry matching;
                    bool has_matching;
                    int next_step = step<PAIRS_IN_TEAMS>(r, e, h.max_diff, width, mine, hk, hl, matching, has_matching, chain);
                    ++mine.pop;
                    if (next_step == STEP_HIT) {
                        hit = true;
                        hit_entry = e;
                    }
                    if (next_step != STEP_EXPANDED || !has_matching) break;
                    e = matching;
                }
#ifdef rungs
                if (r.guard) atomicAdd(r.guard + GUARD_POPS, (u32)mine.pop);
#endif
            }
            int first_hit = team_min(t, hit ? t.lane : t.size);
            int committed = min(first_hit + 1, min(t.size, n_chains - next));
            // bwa checks -m before every pop: only a group that may reach it needs a look.
            int pushed = team_sum(t, t.lane < committed ? (gap_records ? mine.entries : mine.n) + mine.dropped : 0);
            if (lv.stored + lv.dropped + pushed + 1 > (u32)opt.max_entries) {
#if entries_limit_exact
                // bwa stops before a pop of the group: the hits so far are its answer.
                if (entries_limit_inside(lv.stored + lv.dropped, mine, committed, opt.max_entries, t)) return h.n_aln;
#else
                return ENTRIES_LIMIT;
#endif
            }
            commit_pushes(lv, level, lane_bufs, stride, committed, mine.n, t, pushed, mine.entries);
            lv.stored -= committed;
            next += committed;
            int needed_chunks = (n_chains - next + CHUNK - 1) / CHUNK;
            return_chunks(lv, level, needed_chunks, held_chunks, t);
            held_chunks = needed_chunks;
            if (first_hit < t.size) {
                int ended = record_team_hit(h, lv, level, first_hit, hit_entry, hk, hl, width, r, t);
                if (ended != SEARCH_GO) return ended;
            }
        }
        // The level is done: its last chunks go back to the pool.
        return_chunks(lv, level, 0, held_chunks, t);
        if (t.lane == 0) lv.len[level] = 0;
        __syncthreads();
    }
    return h.n_aln;
}

#ifdef rungs
// The team's -m guard counters for a read of `len` bases, zeroed (the caller's barrier follows).
__device__ u32 *rung_guard_reset(u32 *guard, int len, const Team &t)
{
    for (int j = t.lane; j < GUARD_HEAD + 2 * guard_row(len); j += t.size) guard[j] = 0;
    if (t.lane == 0) guard_hit = 0;
    return guard;
}

// Whether the -m guard proves a read whose rung answered under its own limit (cuda/rung_guard.cu,
// compiled after this file and m_guard.cuh with the rungs), its time and reads in `counts`.
__device__ __forceinline__ bool rung_guard_proves(const Read &r, const Hit &first, const u8 *codes, const u64 *cells, const u64 *seed_cells, Entry *lane_bufs, int stride, const Team &t,
    unsigned long long *counts);
#endif

// Passes 2 and 3: each team (thread block) takes the next read of `queue` (as inexact_search)
// and searches it with its pool of `max_chunks` chunks and at most `max_rounds` groups of
// chains (0: no limit); reads whose search needs more go to `next_queue`.
extern "C" __global__ void __launch_bounds__(MAX_TEAM, LEVEL_MIN_BLOCKS) inexact_level(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const ulonglong2 *__restrict__ intervals, int interval_depth,
    const GapOpt *__restrict__ batch_opt, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, const int *__restrict__ read_max_diff,
    const u64 *__restrict__ widths, const u64 *__restrict__ seed_widths, int seed_stride,
    Width *__restrict__ width_pool, Width *__restrict__ seed_width_pool, u8 *__restrict__ seq_pool, int max_len,
    Entry *__restrict__ entry_pool, int *__restrict__ int_pool, int max_chunks, int n_buckets, Entry *__restrict__ lane_pool,
    const ulonglong2 *__restrict__ root_intervals, Hit *__restrict__ hit_pool, int hits_per_read, int *__restrict__ n_hits,
    const u32 *__restrict__ queue, u32 *__restrict__ queue_counters, u32 *__restrict__ next_queue, u32 *__restrict__ next_counters,
    unsigned long long *__restrict__ lookup_count, Hit *__restrict__ warp_hit_pool, int warp_hits,
    Hit *__restrict__ long_hits, u32 long_capacity, u32 *__restrict__ long_count, u32 *__restrict__ long_offset,
    int max_rounds, unsigned long long *__restrict__ resident_ns, unsigned long long *__restrict__ guard_counts)
{
    u64 started = global_ns();
    __shared__ int team_shared[MAX_TEAM / LANES];
    Team t = {(int)threadIdx.x, (int)blockDim.x, team_shared};
    u64 w = blockIdx.x;
    Hit *hits = warp_hit_pool + w * warp_hits;
    u64 lookups = 0;
    Width *width = width_pool + w * (max_len + 1);
    Width *seed_width = seed_width_pool + w * (max_len + 1);
    u8 *seq = seq_pool + w * max_len;
    // Per team: the chunk table, the free chunks, the lengths and (gap_records) the scores with
    // records, one after the other (the host allocates room for all four).
    u64 team_ints = (u64)n_buckets * max_chunks + max_chunks + (gap_records ? 2 : 1) * n_buckets;
    int *ints = int_pool + w * team_ints;
    Levels lv;
    lv.pool = entry_pool + w * (u64)max_chunks * CHUNK;
    lv.table = ints;
    lv.free_chunks = ints + (u64)n_buckets * max_chunks;
    lv.len = lv.free_chunks + max_chunks;
#if gap_records
    lv.with_records = lv.len + n_buckets;
#endif
    lv.max_chunks = max_chunks;
    lv.n_buckets = n_buckets;
    int stride = 9 * (max_len + 1); // pushes of one chain: at most 9 per pop, one pop per base
    Entry *lane_bufs = lane_pool + w * t.size * (u64)stride;
#ifdef rungs
    // After every team's ints, at an even offset (GUARD_SUM is a u64): its -m guard counters.
    u32 *guard = (u32 *)int_pool + ((gridDim.x * team_ints + 1) & ~1ULL) + w * GUARD_INTS(max_len);
#endif
    u32 queued = queue_counters[0];
    while (true) {
        u32 p = 0;
        if (t.lane == 0) p = atomicAdd(&queue_counters[1], 1);
        p = team_broadcast(t, p, 0);
        if (p >= queued) break;
        u32 id = queue[p];
        GapOpt opt = *batch_opt;
        int len = read_len[id];
        int v = read_max_diff[id], n;
#if defined(rungs) && root_chain
        // A read that occurs whole starts at limit 1, not the first guess: its first hit is
        // exact. (A read handed on at limit 1 comes back here at 1.)
        if (RUNG_LIMIT(v) == __ffs(rungs) - 1 && (v >> 8) >= 1) {
            ulonglong2 whole = root_intervals[code_start[id] + id + len];
            if (occurs_whole(whole.x, whole.y)) v = 1 | (v >> 8) << 8;
        }
#endif
        // A read's groups of chains in a pass span all its rungs.
        int rounds = 0;
        for (;;) {
            Read r = prepare_read(words, primary, seq_len, l2, intervals, interval_depth, opt, codes + code_start[id], len, RUNG_LIMIT(v), widths + code_start[id] + id, seed_widths + (u64)id * seed_stride, width, seed_width, seq, lookups, t.lane, t.size);
#ifdef rungs
            r.full = v >> 8;
            r.guard = rung_guard > 0 && RUNG_LIMIT(v) == GUARD_RUNG && r.full > GUARD_RUNG ? rung_guard_reset(guard, len, t) : nullptr;
#endif
            __syncthreads();
            HitList h = new_hit_list(r.opt, hits, warp_hits);
            n = search_read_level(r, width, lv, h, lane_bufs, stride, root_intervals + code_start[id] + id, max_rounds, rounds, t);
#ifdef rungs
            __syncthreads();
            int next = rung_next(v, n, hits[0], opt);
            if (!next && n > 0 && RUNG_LIMIT(v) < r.full && !rung_guard_proves(r, hits[0], codes + code_start[id], widths + code_start[id] + id, seed_widths + (u64)id * seed_stride, lane_bufs, stride, t, guard_counts))
                next = rung_after(v);
            __syncthreads();
            if (next) {
                v = next;
                continue;
            }
            // A read handed on goes on from its rung in the next pass.
            if (n == STACK_FULL && t.lane == 0) ((int *)read_max_diff)[id] = v;
#endif
            break;
        }
        // The hits go to the read's slots, or, when more, to the batch's list of long ones.
        Hit *dst = hit_pool + (u64)id * hits_per_read;
        if (n > hits_per_read) {
            u32 off = 0;
            if (t.lane == 0) off = atomicAdd(long_count, (u32)n);
            off = team_broadcast(t, off, 0);
            if (off + (u32)n <= long_capacity) { // guard
                dst = long_hits + off;
                if (t.lane == 0) long_offset[id] = off;
            } else n = HITS_FULL;
        }
        for (int j = t.lane; j < n; j += t.size) dst[j] = hits[j];
        if (t.lane == 0) {
            if (n == STACK_FULL) next_queue[atomicAdd(&next_counters[0], 1)] = id;
            n_hits[id] = n;
        }
        __syncthreads();
    }
    if (lookups) atomicAdd(lookup_count, (unsigned long long)lookups);
    add_residence(started, resident_ns);
}

// The first pass's queue: the reads without an exact match (k > l, or an N: k = l = 0) first,
// then the rest, each group in any order. read_of[j] is inexact read j's index in the batch
// (exact_match's k and l are per batch read). With `root_intervals` (root_order) the whole
// read's interval is its root chain's last (read_widths', after read j's D array; an N gives
// k > l) and exact_k, exact_l are not read. queue_counters[0] becomes n. With `replayed`
// (candidates.cu's state of each read: REPLAY_PENDING where inexact_replay takes it) those reads
// are left out and the others appended in any order: inexact_replay appends the ones it hands on.
extern "C" __global__ void inexact_order(const u64 *__restrict__ exact_k, const u64 *__restrict__ exact_l,
    const ulonglong2 *__restrict__ root_intervals, const u64 *__restrict__ code_start, const u16 *__restrict__ read_len,
    const u32 *__restrict__ read_of, u32 n, const u8 *__restrict__ replayed, u32 *__restrict__ queue,
    u32 *__restrict__ order_counters, u32 *__restrict__ queue_counters)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    bool exact;
    if (root_intervals) {
        ulonglong2 whole = root_intervals[code_start[j] + j + read_len[j]];
        exact = occurs_whole(whole.x, whole.y);
    } else {
        u32 b = read_of[j];
        exact = occurs_whole(exact_k[b], exact_l[b]);
    }
    if (replayed) {
        atomicAdd(&order_counters[exact ? 1 : 0], 1);
        if (replayed[j] != REPLAY_PENDING) queue[atomicAdd(&queue_counters[0], 1)] = j;
        return;
    }
    if (exact) queue[n - 1 - atomicAdd(&order_counters[1], 1)] = j;
    else queue[atomicAdd(&order_counters[0], 1)] = j;
    if (j == 0) queue_counters[0] = n;
}
