// candidates: every alignment of a read within a score budget at bwa's penalties (mismatch,
// gap open, gap extension; at most max_gapo gaps and the read's edit limit), found by
// pigeonhole searches over the bidirectional index bwa's BWT of both strands is. A port of
// src/search/pigeonhole.rs (`within`): the same alignments, found breadth first over a whole
// batch instead of depth first per read.
//
// Why breadth first: a read's searches are chains of dependent lookups, a read's length long,
// and one read a thread (cuda/no_hit.cu) or a warp (the team passes) leaves most of the time
// waiting on them. Here each round extends every live branch of every read once, one branch
// a thread: the lookups of a round are all independent, and a round's branches are as many as
// the batch has, so the memory system, not one read's latency, sets the rate.
//
// The read is cut into `parts` (one more than the most edits the budget pays for), one of
// which any alignment within the budget matches exactly. Search j matches part j exactly
// (EXACT branches, prepending), extends it to the right over the parts after it (RIGHT), then
// to the left over those before it (LEFT), each of which must hold an edit (an alignment with
// one of them exact is an earlier search's), pruned by the read's bounds (like bwa's D array).
// Each column a RIGHT or LEFT branch takes is a node (its parent and the column), so an
// alignment found is its node's path; `found` lists them with their read, part and score.
//
// A rung of the ladder: candidate_seed starts the listed reads' searches, candidate_round runs
// the rounds (round r reads counts[r] branches and appends to counts[r + 1], so the host
// launches them without waiting), candidate_rung_end decides each read's next budget from the
// best score found. A read whose searches take more than `most_extensions` extensions in a
// rung (or as many) is left to bwa's search.

#ifndef CAND_BLOCK_W
#define CAND_BLOCK_W 256
#endif
// Blocks an SM must hold at once (0: as the registers allow); more caps the registers.
#ifndef CAND_MIN_BLOCKS
#define CAND_MIN_BLOCKS 0
#endif
#ifndef CAND_SECTORS
#define CAND_SECTORS 0
#endif

#define KIND_EXACT 0
#define KIND_RIGHT 1
#define KIND_LEFT 2

// Columns: a string base against the read's (0-3), an inserted read base, a deleted string
// base (COL_DEL + base); COL_LEFT marks the columns left of the exact part.
#define COL_INS 4
#define COL_DEL 5
#define COL_LEFT 16
#define NO_NODE 0xffffffffu
#define NO_FOUND 0xffffffffu

#define GAP_NONE 0
#define GAP_INS 1
#define GAP_DEL 2

// What a branch is after its checks: pruned, waiting for its next extension, or an alignment.
#define DEAD 0
#define READY 1
#define FOUND 2

// A read's state in the ladder.
#define CAND_PENDING 0
#define CAND_ANSWERED 1
#define CAND_LEFT 2
#define CAND_EXACT 3
#define CAND_PROOF 4
#define CAND_NO_ALIGNMENT 5
// Left to bwa's search, and why: a rung's extensions (or fewer bases than parts), a best score
// past most_score, an alignment the proof found, the proof's extensions.
#define CAND_LEFT_EXTENSIONS 6
#define CAND_LEFT_SCORE 7
#define CAND_LEFT_ALIGNS 8
#define CAND_LEFT_PROOF_EXTENSIONS 9

// The counters of a rung: nodes, alignments found, overflow (a buffer was full), lookups (u64
// at CNT_LOOKUPS).
#define CNT_NODES 0
#define CNT_FOUND 1
#define CNT_OVERFLOW 2
#define CNT_LOOKUPS 4

#define NO_SCORE 0xffffffffu

struct BiInterval {
    u64 fwd, rev, size;
};

struct Branch {
    BiInterval ik;
    u32 read, node;
    u16 i, score;
    u8 kind, part, edits, opens, gap, part_edits;
};

// An alignment found: its read, its search (part), its last node and its score.
struct Found {
    u32 read, node, part, score;
};

// What a rung may spend: bwa's penalties (or 1 each for the no-hit proof), the gaps allowed.
struct Penalties {
    int s_mm, s_gapo, s_gape, max_gapo;
};

__device__ __forceinline__ int cheapest(const Penalties &p)
{
    if (p.max_gapo == 0) return p.s_mm;
    int c = p.s_mm < p.s_gapo ? p.s_mm : p.s_gapo;
    return c < p.s_gape ? c : p.s_gape;
}

// The batch: reads (codes, N as 4), their bounds (after[0..=len], then before[0..=len]), and
// each read's budget and edit limit for this rung.
struct Reads {
    const u8 *codes;
    const u64 *code_start;
    const u16 *len;
    const u8 *bounds;
    const u64 *bound_start;
    const u16 *budget;
    const u8 *max_edits;
};

// One read's search j as a branch at read position `at` sees it. The bounds its children's
// checks need are loaded with it, so that they wait on memory once, not once a child.
struct View {
    const u8 *read, *after, *before;
    int len, parts, start, end, budget, max_edits, cheapest, before_start;
    int at, base; // the branch's position and the read base its extension takes (4: none)
    int after_at, after_next, before_at, before_prev, after_end, before_first;
};

__device__ __forceinline__ int part_start(int j, int len, int parts) { return j * len / parts; }

// The part of read position i: the last j with j * len < (i + 1) * parts.
__device__ __forceinline__ int part_of(int i, int len, int parts) { return ((i + 1) * parts - 1) / len; }

// The parts a budget cuts a read into: one more than the most edits it pays for.
__device__ __forceinline__ int parts_for(int budget, int max_edits, int cheapest)
{
    int edits = budget / cheapest;
    return (edits < max_edits ? edits : max_edits) + 1;
}

// Read r's search j for a branch of `kind` at position `at`.
__device__ __forceinline__ View view_of(const Reads &rs, const Penalties &p, u32 r, int j, int at, int kind)
{
    View v;
    v.len = rs.len[r];
    v.read = rs.codes + rs.code_start[r];
    v.after = rs.bounds + rs.bound_start[r];
    v.before = v.after + v.len + 1;
    v.budget = rs.budget[r];
    v.max_edits = rs.max_edits[r];
    v.cheapest = cheapest(p);
    v.parts = parts_for(v.budget, v.max_edits, v.cheapest);
    v.start = part_start(j, v.len, v.parts);
    v.end = j + 1 < v.parts ? part_start(j + 1, v.len, v.parts) : v.len;
    v.at = at;
    int base_at = kind == KIND_RIGHT ? at : at - 1;
    v.base = base_at >= 0 && base_at < v.len ? v.read[base_at] : 4;
    v.after_at = v.after[at];
    v.after_next = at < v.len ? v.after[at + 1] : 0;
    v.before_at = v.before[at];
    v.before_prev = at > 0 ? v.before[at - 1] : 0;
    v.after_end = v.after[v.end];
    v.before_first = v.before[v.start];
    int need = v.before_first > j ? v.before_first : j;
    v.before_start = need * v.cheapest;
    return v;
}

// after[i] and before[i] for the positions a branch's children reach, from the view's
// registers (memory for any other, which the searches do not reach).
__device__ __forceinline__ int after_of(const View &v, int i)
{
    return i == v.at ? v.after_at : i == v.at + 1 ? v.after_next : i == v.end ? v.after_end : v.after[i];
}

__device__ __forceinline__ int before_of(const View &v, int i)
{
    return i == v.at ? v.before_at : i == v.at - 1 ? v.before_prev : i == v.start ? v.before_first : v.before[i];
}

// The interval of the one-base string c.
__device__ __forceinline__ BiInterval base_interval(const u64 *l2, int c)
{
    BiInterval ik = {l2[c] + 1, l2[3 - c] + 1, l2[c + 1] - l2[c]};
    return ik;
}

// Occurrences of every base in rows 0..=k (k == ~0 gives zeros): from the occurrence sectors
// with CAND_SECTORS (one 32-byte sector a lookup; cuda/bwt.cuh), else from bwa's array.
__device__ __forceinline__ void count4(const u32 *words, u64 primary, u64 k, u64 cnt[4])
{
#if CAND_SECTORS
    sector_occ4(words, primary, k, cnt);
#else
    occ4(words, primary, k, cnt);
#endif
}

// The four extensions of ik by one base (bwa-mem's bwt_extend), two occurrence lookups:
// prepended (back), where out[c] is c·W, or appended, where out[c] is W·(3-c).
__device__ __forceinline__ void extend(const u32 *words, u64 primary, const u64 *l2, const BiInterval &ik, bool back, BiInterval out[4])
{
    u64 searched = back ? ik.fwd : ik.rev;
    u64 other = back ? ik.rev : ik.fwd;
    u64 tk[4], tl[4];
    count4(words, primary, searched - 1, tk);
    count4(words, primary, searched - 1 + ik.size, tl);
    bool holds_primary = searched <= primary && searched + ik.size > primary;
    u64 next = other + (holds_primary ? 1 : 0);
#pragma unroll
    for (int c = 3; c >= 0; --c) {
        u64 searched_c = l2[c] + 1 + tk[c];
        u64 size = tl[c] - tk[c];
        out[c].fwd = back ? searched_c : next;
        out[c].rev = back ? next : searched_c;
        out[c].size = size;
        next += size;
    }
}

// kids[c] for a c known only at run time, by selects: indexing the array with it would move
// the array to local memory, and every child's checks would wait on it.
__device__ __forceinline__ BiInterval pick(const BiInterval kids[4], int c)
{
    return c == 0 ? kids[0] : c == 1 ? kids[1] : c == 2 ? kids[2] : kids[3];
}

// The piece so far (`grown`: whether there is one) grown by base c, prepended or appended;
// false when it stops occurring.
__device__ __forceinline__ bool grow(const u32 *words, u64 primary, const u64 *l2, BiInterval &ik, bool grown, int c, bool back, u32 &lookups)
{
    if (c > 3) return false;
    if (!grown) {
        ik = base_interval(l2, c);
        return true;
    }
    BiInterval out[4];
    extend(words, primary, l2, ik, back, out);
    lookups += 2;
    ik = pick(out, back ? c : 3 - c);
    return ik.size > 0;
}

// The read's bounds (src/search/no_hit.rs, `bounds`): cut greedily into pieces that each fail
// to occur by their last base (from the right end for `after`, from the left for `before`), a
// part of the read needs an edit in every such piece it holds whole. Returns the lookups.
__device__ __forceinline__ u32 bounds_of(const u32 *words, u64 primary, const u64 *l2, const u8 *read, int len, u8 *after, u8 *before)
{
    BiInterval ik;
    bool grown = false;
    int pieces = 0;
    u32 lookups = 0;
    after[len] = 0;
    for (int i = len - 1; i >= 0; --i) {
        grown = grow(words, primary, l2, ik, grown, read[i], true, lookups);
        if (!grown && pieces < 255) ++pieces;
        after[i] = (u8)pieces;
    }
    grown = false;
    pieces = 0;
    before[0] = 0;
    for (int i = 0; i < len; ++i) {
        grown = grow(words, primary, l2, ik, grown, read[i], false, lookups);
        if (!grown && pieces < 255) ++pieces;
        before[i + 1] = (u8)pieces;
    }
    return lookups;
}

// Branch b's checks, and the moves that need no lookup: an exact part done turns right at its
// end, a right extension at the read's end turns left at the part's start, a left one at the
// read's start is an alignment.
__device__ __forceinline__ int settle(const View &v, Branch &b)
{
    for (;;) {
        if (b.kind == KIND_EXACT) {
            if (b.i > v.start) return READY;
            b.kind = KIND_RIGHT;
            b.i = v.end;
            continue;
        }
        if (b.kind == KIND_RIGHT) {
            if (b.score + after_of(v, b.i) * v.cheapest + v.before_start > v.budget) return DEAD;
            if (b.i < v.len) return READY;
            b.kind = KIND_LEFT;
            b.i = v.start;
            b.gap = GAP_NONE;
            b.part_edits = 0;
            continue;
        }
        if (b.i == 0) return FOUND;
        int open = part_of(b.i - 1, v.len, v.parts) + (b.part_edits == 0 ? 1 : 0);
        int before = before_of(v, b.i), need = before > open ? before : open;
        return b.score + need * v.cheapest > v.budget ? DEAD : READY;
    }
}

// b with column col (a string base, COL_INS or COL_DEL + base) against read base `base`
// added, into `out`; false where the budget does not allow it.
__device__ __forceinline__ bool add(const Penalties &p, const View &v, const Branch &b, int col, int base, Branch &out)
{
    out = b;
    bool edit = col >= COL_INS || col != base;
    int cost = 0;
    if (col < COL_INS) {
        cost = edit ? p.s_mm : 0;
        out.gap = GAP_NONE;
    } else {
        int kind = col == COL_INS ? GAP_INS : GAP_DEL;
        if (b.gap == kind) {
            cost = p.s_gape;
        } else {
            cost = p.s_gapo;
            out.opens = b.opens + 1;
        }
        out.gap = kind;
    }
    out.score = b.score + cost;
    out.edits = b.edits + (edit ? 1 : 0);
    return out.score <= v.budget && out.opens <= p.max_gapo && out.edits <= v.max_edits;
}

// The children of b given its extensions `kids`, each passed to emit(child, column) before its
// checks (column -1: an exact part's next base, which is no node).
template <typename Emit>
__device__ __forceinline__ void for_children(const Penalties &p, const View &v, const Branch &b, const BiInterval kids[4], Emit emit)
{
    Branch c;
    int base = v.base;
    if (b.kind == KIND_EXACT) {
        if (base > 3) return;
        c = b;
        c.ik = pick(kids, base);
        if (c.ik.size == 0) return;
        c.i = b.i - 1;
        emit(c, -1);
        return;
    }
    if (b.kind == KIND_RIGHT) {
#pragma unroll
        for (int x = 0; x < 4; ++x)
            if (kids[3 - x].size > 0 && add(p, v, b, x, base, c)) {
                c.ik = kids[3 - x];
                c.i = b.i + 1;
                emit(c, x);
            }
        if (add(p, v, b, COL_INS, base, c)) {
            c.i = b.i + 1;
            emit(c, COL_INS);
        }
#pragma unroll
        for (int x = 0; x < 4; ++x)
            if (kids[3 - x].size > 0 && add(p, v, b, COL_DEL + x, base, c)) {
                c.ik = kids[3 - x];
                emit(c, COL_DEL + x);
            }
        return;
    }
    bool finishes = part_start(part_of(b.i - 1, v.len, v.parts), v.len, v.parts) == b.i - 1;
#pragma unroll
    for (int x = 0; x < 4; ++x) {
        int edits = b.part_edits + (x != base ? 1 : 0);
        if (kids[x].size > 0 && !(finishes && edits == 0) && add(p, v, b, x, base, c)) {
            c.ik = kids[x];
            c.i = b.i - 1;
            c.part_edits = finishes ? 0 : edits;
            emit(c, x | COL_LEFT);
        }
    }
    if (add(p, v, b, COL_INS, base, c)) {
        c.i = b.i - 1;
        c.part_edits = finishes ? 0 : b.part_edits + 1;
        emit(c, COL_INS | COL_LEFT);
    }
#pragma unroll
    for (int x = 0; x < 4; ++x)
        if (kids[x].size > 0 && add(p, v, b, COL_DEL + x, base, c)) {
            c.ik = kids[x];
            c.part_edits = b.part_edits + 1;
            emit(c, (COL_DEL + x) | COL_LEFT);
        }
}

// n slots of *counter for this thread. On the GPU every lane of the warp calls it together
// (n may be 0): one atomic a warp, the lanes' slots in lane order.
__device__ __forceinline__ u32 claim(u32 *counter, u32 n)
{
#ifdef __CUDA_ARCH__
    u32 lane = threadIdx.x & 31, incl = n;
    for (int d = 1; d < 32; d <<= 1) {
        u32 v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= (u32)d) incl += v;
    }
    u32 total = __shfl_sync(0xffffffffu, incl, 31), first = 0;
    if (lane == 31 && total > 0) first = atomicAdd(counter, total);
    first = __shfl_sync(0xffffffffu, first, 31);
    return first + incl - n;
#else
    return atomicAdd(counter, n);
#endif
}

// Adds this thread's lookups to the rung's count: one atomic a warp (its active lanes' sum), as
// one a thread on one address would serialize the whole round behind it.
__device__ __forceinline__ void count_lookups(u32 *counters, u32 lookups)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    u32 mask = __activemask(), total = __reduce_add_sync(mask, lookups);
    if ((threadIdx.x & 31) == (u32)(__ffs(mask) - 1) && total > 0)
        atomicAdd((unsigned long long *)(counters + CNT_LOOKUPS), (unsigned long long)total);
#else
    atomicAdd((unsigned long long *)(counters + CNT_LOOKUPS), (unsigned long long)lookups);
#endif
}

// Where a rung's branches, nodes and alignments go.
struct Outputs {
    Branch *next;
    u32 next_capacity;
    u64 *nodes; // parent | column << 32 (null: not kept, as the no-hit proof needs no paths)
    u32 node_capacity;
    Found *found;
    u32 found_capacity;
    u32 *counters;
    u32 *best; // per read: the lowest score found (atomicMin), NO_SCORE if none
    u8 *any; // per read: an alignment was found (the proof stops there)
    // Optional (null: not kept): each read's alignments as a list, its head per read and the
    // next alignment per alignment, so that a read's tree is built without sorting them.
    u32 *found_head;
    u32 *found_next;
};

// Counts of what a branch's children become: ready branches, nodes, alignments.
struct Tally {
    u32 ready, nodes, found;
};

// Writes child c (its column col, -1 for none) to the slots from `at`, as its checks say.
__device__ __forceinline__ void place(const View &v, Branch c, int col, const Outputs &o, Tally &at)
{
    int what = settle(v, c);
    if (what == DEAD) return;
    if (col >= 0) {
        u32 n = at.nodes++;
        if (o.nodes && n < o.node_capacity) o.nodes[n] = (u64)c.node | (u64)col << 32;
        c.node = n;
    }
    if (what == READY) {
        u32 n = at.ready++;
        if (n < o.next_capacity) o.next[n] = c;
        return;
    }
    u32 n = at.found++;
    if (n < o.found_capacity) {
        Found f = {c.read, c.node, c.part, c.score};
        o.found[n] = f;
        if (o.found_head) o.found_next[n] = atomicExch(&o.found_head[c.read], n);
    }
    atomicMin(&o.best[c.read], (u32)c.score);
    o.any[c.read] = 1;
}

// Counts what child c (column col) becomes.
__device__ __forceinline__ void count(const View &v, Branch c, int col, Tally &t)
{
    int what = settle(v, c);
    if (what == DEAD) return;
    t.nodes += col >= 0 ? 1 : 0;
    t.ready += what == READY ? 1 : 0;
    t.found += what == FOUND ? 1 : 0;
}

// Where a claim ran past a buffer's end, sets the overflow counter and loses the read: its
// extensions reach the limit, so it extends no more and no kernel after the rung answers it
// from a search that lost children; the other reads' searches stay whole.
__device__ __forceinline__ void check_room(const Outputs &o, const Tally &at, const Tally &t, u32 *extensions,
    u32 read, u32 most_extensions)
{
    if (at.ready + t.ready > o.next_capacity || (o.nodes && at.nodes + t.nodes > o.node_capacity) ||
        at.found + t.found > o.found_capacity) {
        o.counters[CNT_OVERFLOW] = 1;
        atomicMax(&extensions[read], most_extensions);
    }
}

// One round: each of the counts[round] branches of `in` is extended once and its children go
// to the next round's branches, the nodes and the alignments found. A read over
// `most_extensions` extensions in this rung, or (stop_at_any) one that found an alignment,
// extends no more.
#if CAND_MIN_BLOCKS
#define CAND_ROUND_BOUNDS __launch_bounds__(CAND_BLOCK_W, CAND_MIN_BLOCKS)
#else
#define CAND_ROUND_BOUNDS __launch_bounds__(CAND_BLOCK_W)
#endif
extern "C" __global__ void CAND_ROUND_BOUNDS candidate_round(const u32 *__restrict__ words, u64 primary,
    const u64 *__restrict__ l2, Reads rs, Penalties p, u32 round, const Branch *__restrict__ in, u32 *counts,
    Outputs o, u32 *extensions, u32 most_extensions, int stop_at_any)
{
    u32 *next_count = counts + round + 1;
    // Past a full buffer (the rung has failed: its overflow counter is set) only what it holds.
    u32 n_in = counts[round] < o.next_capacity ? counts[round] : o.next_capacity;
    u32 stride = gridDim.x * blockDim.x;
    u32 lookups = 0;
    for (u32 from = blockIdx.x * blockDim.x; from < n_in; from += stride) {
        u32 idx = from + threadIdx.x;
        bool live = idx < n_in;
        Branch b;
        View v;
        BiInterval kids[4];
        Tally t = {0, 0, 0};
        if (live) {
            // Every load first (the branch's view, its read's count, its lookups), then what
            // depends on them: one wait on memory a branch.
            b = in[idx];
            v = view_of(rs, p, b.read, b.part, b.i, b.kind);
            u32 done = extensions[b.read];
            bool stopped = stop_at_any && o.any[b.read];
            extend(words, primary, l2, b.ik, b.kind != KIND_RIGHT, kids);
            // The count read may lag the other branches' additions: a read at the limit is
            // left whole by rung_end, so only the extensions of a read under it must all run.
            live = !stopped && done < most_extensions;
        }
        if (live) {
            atomicAdd(&extensions[b.read], 1);
            lookups += 2;
            for_children(p, v, b, kids, [&](const Branch &c, int col) { count(v, c, col, t); });
        }
        Tally at = {claim(next_count, t.ready), claim(&o.counters[CNT_NODES], t.nodes), claim(&o.counters[CNT_FOUND], t.found)};
        if (live) {
            check_room(o, at, t, extensions, b.read, most_extensions);
            for_children(p, v, b, kids, [&](const Branch &c, int col) { place(v, c, col, o, at); });
        }
    }
    count_lookups(o.counters, lookups);
}

// Each pending read's bounds (bounds_of), and its first budget: the fewest edits its bounds
// allow, at the cheapest edit's cost, plus a mismatch (bwa pops up to its best hit's score plus
// one), or with `proof` its edit limit (the no-hit proof's budget at an edit each). A read that
// occurs whole (exact_match's answer) is left to bwa's search unless exact_too (its first budget
// is then one mismatch); the others are listed for the first rung.
extern "C" __global__ void candidate_bounds(const u32 *__restrict__ words, u64 primary, const u64 *__restrict__ l2,
    Reads rs, Penalties p, u32 n_reads, int exact_too, int proof, u8 *bounds, u16 *budget, u8 *status, u32 *list,
    u32 *list_count, u32 *counters)
{
    u32 r = blockIdx.x * blockDim.x + threadIdx.x;
    bool listed = false;
    if (r < n_reads && status[r] == CAND_PENDING) {
        int len = rs.len[r];
        u8 *after = bounds + rs.bound_start[r], *before = after + len + 1;
        count_lookups(counters, bounds_of(words, primary, l2, rs.codes + rs.code_start[r], len, after, before));
        int fewest = after[0] > before[len] ? after[0] : before[len];
        budget[r] = proof ? (u16)rs.max_edits[r] : (u16)(fewest * cheapest(p) + p.s_mm);
        listed = after[0] > 0 || exact_too;
        if (!listed) status[r] = CAND_EXACT;
    }
    u32 at = claim(list_count, listed ? 1 : 0);
    if (listed) list[at] = r;
}

// Read r's state after a rung (CAND_PENDING: another rung, its budget raised).
__device__ __forceinline__ int next_step(u32 r, const u32 *best, const u32 *extensions, u32 most_extensions, int s_mm,
    int most_score, u16 *budget)
{
    if (extensions[r] >= most_extensions) return CAND_LEFT_EXTENSIONS;
    int score = budget[r];
    if (best[r] != NO_SCORE) {
        int bound = (int)best[r] + s_mm;
        if (bound <= score) return CAND_ANSWERED;
        if (bound > most_score) return CAND_LEFT_SCORE;
        budget[r] = (u16)bound;
        return CAND_PENDING;
    }
    if (score + s_mm > most_score) return CAND_PROOF;
    budget[r] = (u16)(score + s_mm);
    return CAND_PENDING;
}

// After a rung of the ladder, each of the *n_listed reads' next step: answered where the best score found
// plus a mismatch fits the budget (bwa pops nothing above it, and the budget held every path of
// those scores); otherwise the budget rises to that bound, or by a mismatch where nothing was
// found; past most_score the read is left to bwa's search, or with nothing found goes to the
// no-hit proof (budget: its edit limit). Reads over the rung's extensions are left to bwa's.
extern "C" __global__ void candidate_rung_end(const u32 *__restrict__ list, const u32 *__restrict__ n_listed,
    const u32 *__restrict__ best, const u32 *__restrict__ extensions, u32 most_extensions, int s_mm, int most_score,
    const u8 *__restrict__ max_edits, u16 *budget, u8 *status, u32 *next_list, u32 *next_count, u32 *proof_list,
    u32 *proof_count)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x, n = *n_listed;
    u32 r = k < n ? list[k] : 0;
    int next = k < n ? next_step(r, best, extensions, most_extensions, s_mm, most_score, budget) : CAND_LEFT;
    if (k < n && next != CAND_PENDING) status[r] = (u8)next;
    if (next == CAND_PROOF) budget[r] = max_edits[r];
    u32 at_next = claim(next_count, next == CAND_PENDING ? 1 : 0);
    u32 at_proof = claim(proof_count, next == CAND_PROOF ? 1 : 0);
    if (next == CAND_PENDING) next_list[at_next] = r;
    if (next == CAND_PROOF) proof_list[at_proof] = r;
}

// After the no-hit proof over the *n_listed reads of `list`: a read with no alignment within its
// edit limit has no hit of bwa's; one with an alignment, or whose proof ran over its extensions
// (or lost a child to a full buffer: check_room), is left to bwa's search.
extern "C" __global__ void candidate_proof_end(const u32 *__restrict__ list, const u32 *__restrict__ n_listed,
    const u8 *__restrict__ any, const u32 *__restrict__ extensions, u32 most_extensions, u8 *status)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= *n_listed) return;
    u32 r = list[k];
    status[r] = any[r] ? CAND_LEFT_ALIGNS
        : extensions[r] >= most_extensions ? CAND_LEFT_PROOF_EXTENSIONS : CAND_NO_ALIGNMENT;
}

// Search j's first branch of read r (from its part's last base) into b, and its view into vj;
// false where that base is an N (the part matches nowhere: no branch).
__device__ __forceinline__ bool seed_branch(const u64 *l2, const Reads &rs, const Penalties &p, u32 r, int j, Branch &b, View &vj)
{
    vj = view_of(rs, p, r, j, 0, KIND_EXACT);
    vj.at = -2; // no branch position: its checks read the bounds from memory
    int last = vj.read[vj.end - 1];
    if (last > 3) return false;
    b = Branch{};
    b.kind = KIND_EXACT;
    b.ik = base_interval(l2, last);
    b.read = r;
    b.node = NO_NODE;
    b.i = (u16)(vj.end - 1);
    b.part = (u8)j;
    return true;
}

// Starts the searches of the *n_listed reads of `list`: one EXACT branch a part, from its last base, as
// round 0's branches (counts[0]); resets their best score and extensions.
extern "C" __global__ void candidate_seed(const u64 *__restrict__ l2, Reads rs, Penalties p, const u32 *__restrict__ list,
    const u32 *__restrict__ n_listed, u32 *counts, Branch *first, Outputs o, u32 *extensions)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    bool live = k < *n_listed;
    u32 r = live ? list[k] : 0;
    View v;
    if (live) {
        o.best[r] = NO_SCORE;
        o.any[r] = 0;
        if (o.found_head) o.found_head[r] = NO_FOUND;
        extensions[r] = 0;
        v = view_of(rs, p, r, 0, 0, KIND_EXACT);
        // Fewer bases than parts: left to bwa's search (rung_end sees the extensions).
        if (v.len < v.parts) extensions[r] = ~0u;
        live = v.len >= v.parts;
    }
    o.next = first;
    Tally t = {0, 0, 0};
    for (int j = 0; live && j < v.parts; ++j) {
        Branch b;
        View vj;
        if (seed_branch(l2, rs, p, r, j, b, vj)) count(vj, b, -1, t);
    }
    // Every lane claims together (see claim), then each places its parts' branches.
    Tally at = {claim(counts, t.ready), claim(&o.counters[CNT_NODES], t.nodes), claim(&o.counters[CNT_FOUND], t.found)};
    if (live) check_room(o, at, t, extensions, r, ~0u);
    for (int j = 0; live && j < v.parts; ++j) {
        Branch b;
        View vj;
        if (seed_branch(l2, rs, p, r, j, b, vj)) place(vj, b, -1, o, at);
    }
}

// ---- The replay's input: each answered read's alignments as a tree of bwa's search ----
// bwa's search walks an alignment from the read's end (its search sequence is consumed from the
// right), one column a node. The tree holds every answered read's alignments so walked, each
// node linked to its parent by what bwa's entry shows of the column: the read position reached,
// the gap state and the string base (none for an insertion). inexact_replay (inexact_match.cu)
// runs bwa's search keeping only the children the tree has (src/search/replay.rs, whose
// CandidateTree this is).
#define TREE_NONE 0xffffffffu
#define TREE_STATE_M 0
#define TREE_STATE_I 1
#define TREE_STATE_D 2
#define TREE_NO_BASE 4
// A read left to bwa's search by the tree: more alignments than it takes, or no room.
#define CAND_LEFT_TREE 10
// The most columns left of an exact part an alignment may take (reads of up to 512 bases with
// 31 deletions, and some to spare).
#define TREE_MAX_LEFT 576

struct TreeNode {
    u32 link, first_child, next_sibling;
};

__device__ __forceinline__ u32 tree_link(int i, int state, int base) { return (u32)i | (u32)state << 16 | (u32)base << 18; }

// A read's nodes: node 0 its root, `used` of `capacity` taken.
struct TreeCursor {
    TreeNode *nodes;
    u32 used, capacity;
};

// Where bwa's search is on an alignment's path: its node, read bases left and gap state.
struct Walk {
    u32 node;
    int i, state;
};

// parent's child linked by `link`, added if it is new; TREE_NONE where there is no room (guard).
__device__ u32 child_or_new(TreeCursor &t, u32 parent, u32 link)
{
    for (u32 c = t.nodes[parent].first_child; c != TREE_NONE; c = t.nodes[c].next_sibling)
        if (t.nodes[c].link == link) return c;
    if (t.used == t.capacity) return TREE_NONE;
    u32 id = t.used++;
    TreeNode n = {link, TREE_NONE, t.nodes[parent].first_child};
    t.nodes[id] = n;
    t.nodes[parent].first_child = id;
    return id;
}

// The walk goes on by column col (a string base against the read's, COL_INS, COL_DEL + base),
// as bwa's step takes it (src/search/replay.rs, `reach`).
__device__ void take_column(TreeCursor &t, Walk &w, int col)
{
    int base = TREE_NO_BASE;
    if (col < COL_INS) {
        --w.i;
        w.state = TREE_STATE_M;
        base = col;
    } else if (col == COL_INS) {
        --w.i;
        w.state = TREE_STATE_I;
    } else {
        w.state = TREE_STATE_D;
        base = col - COL_DEL;
    }
    if (w.node != TREE_NONE) w.node = child_or_new(t, w.node, tree_link(w.i, w.state, base));
}

// Alignment f of a read of `len` bases cut into `parts`: its columns from the right end, into
// the tree. Its nodes walked back give the left columns from the leftmost, then the right ones
// from the rightmost; the exact part lies between. False where the tree had no room.
__device__ bool add_alignment(TreeCursor &t, const u64 *nodes, const Found &f, const u8 *read, int len, int parts)
{
    u8 left[TREE_MAX_LEFT];
    int n_left = 0;
    u32 node = f.node;
    for (; node != NO_NODE; node = (u32)nodes[node]) {
        int col = (int)(nodes[node] >> 32);
        if (!(col & COL_LEFT)) break;
        if (n_left == TREE_MAX_LEFT) return false;
        left[n_left++] = (u8)(col & 15);
    }
    Walk w = {0, len, TREE_STATE_M};
    for (; node != NO_NODE; node = (u32)nodes[node]) take_column(t, w, (int)(nodes[node] >> 32) & 15);
    int start = part_start(f.part, len, parts);
    int end = (int)f.part + 1 < parts ? part_start(f.part + 1, len, parts) : len;
    for (int i = end - 1; i >= start; --i) take_column(t, w, read[i]);
    while (n_left > 0) take_column(t, w, left[--n_left]);
    return w.node != TREE_NONE;
}

// After a rung's rung_end: the tree of each of the *n_listed reads it answered, from the
// rung's alignments (found_head, found_next), in `tree` from tree_start[r] (claimed from
// *tree_used: one node for the root and a path's most columns for each alignment). A read with
// more than most_aligns alignments, or for which the tree has no room, or of a rung that
// outgrew a buffer (its nodes are not all there), is left to bwa's search.
extern "C" __global__ void candidate_tree(const u32 *__restrict__ list, const u32 *__restrict__ n_listed, Reads rs,
    Penalties p, const u64 *__restrict__ nodes, const Found *__restrict__ found, const u32 *__restrict__ found_head,
    const u32 *__restrict__ found_next, const u32 *__restrict__ counters, u32 most_aligns, TreeNode *tree,
    u32 tree_capacity, u32 *tree_used, u32 *tree_start, u8 *status)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    u32 r = k < *n_listed ? list[k] : 0;
    bool live = k < *n_listed && status[r] == CAND_ANSWERED;
    int len = live ? rs.len[r] : 0, edits = live ? rs.budget[r] / cheapest(p) : 0;
    u32 aligns = 0;
    for (u32 f = live ? found_head[r] : NO_FOUND; f != NO_FOUND && aligns <= most_aligns; f = found_next[f]) ++aligns;
    bool fits = live && counters[CNT_OVERFLOW] == 0 && aligns <= most_aligns;
    u32 want = fits ? 1 + aligns * (u32)(len + edits) : 0;
    u32 at = claim(tree_used, want);
    if (!live) return;
    fits = fits && (u64)at + want <= tree_capacity;
    TreeCursor t = {tree + at, 1, want};
    if (fits) {
        TreeNode root = {tree_link(len, TREE_STATE_M, TREE_NO_BASE), TREE_NONE, TREE_NONE};
        t.nodes[0] = root;
    }
    int parts = parts_for(rs.budget[r], rs.max_edits[r], cheapest(p));
    const u8 *read = rs.codes + rs.code_start[r];
    for (u32 f = found_head[r]; fits && f != NO_FOUND; f = found_next[f]) fits = add_alignment(t, nodes, found[f], read, len, parts);
    if (fits) tree_start[r] = at;
    else status[r] = CAND_LEFT_TREE;
}

// Read j's search sequence (its reverse complement, N as 4: bwa's) into seq at the read's place,
// and where its bounds go (after its codes' place, two per base and one more each).
__device__ __forceinline__ void place_search_seq(const u8 *codes, const u64 *code_start, u32 j, int len, u8 *seq,
    u64 *bound_start)
{
    bound_start[j] = 2 * (code_start[j] + j);
    const u8 *read = codes + code_start[j];
    u8 *out = seq + code_start[j];
    for (int i = 0; i < len; ++i) out[i] = read[len - 1 - i] > 3 ? 4 : 3 - read[len - 1 - i];
}

// ---- Reads that occur whole, through the ladder in aln ----
// bwa's search of a read that occurs whole finds the exact hit first (score 0), then proves the
// stratum of one mismatch: its pops score 0 or s_mm (the host turns this on only where every gap
// costs more), so its stack holds at most 1 + 8 x (len + 1)(3 len + 1) entries, and `max_len`
// (from bwa's -m) keeps those whose search -m could stop. Each such read of the batch's inexact
// reads is listed (list, *list_count) for one rung at a budget of one mismatch, with its search
// sequence (the read's reverse complement, bwa's) written to `seq` and its bounds, which are
// all 0 (every piece of the read occurs), in place of candidate_bounds'; every other read is
// CAND_LEFT. Edits are left unlimited: the budget limits them, and the replay applies bwa's.
extern "C" __global__ void candidate_exact_reads(const u64 *__restrict__ exact_k, const u64 *__restrict__ exact_l,
    const u32 *__restrict__ read_of, const u8 *__restrict__ codes, const u64 *__restrict__ code_start,
    const u16 *__restrict__ read_len, u32 n, int max_len, int s_mm, u8 *seq, u8 *bounds, u64 *bound_start,
    u16 *budget, u8 *max_edits, u8 *status, u32 *list, u32 *list_count)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    bool pending = false;
    if (j < n) {
        u32 b = read_of[j];
        bool exact = occurs_whole(exact_k[b], exact_l[b]);
        int len = read_len[j];
        pending = exact && len > 0 && len <= max_len;
        status[j] = pending ? CAND_PENDING : CAND_LEFT;
        max_edits[j] = 31;
        budget[j] = (u16)s_mm;
        place_search_seq(codes, code_start, j, pending ? len : 0, seq, bound_start);
        u64 at = bound_start[j];
        for (int i = 0; pending && i < 2 * (len + 1); ++i) bounds[at + i] = 0;
    }
    u32 slot = claim(list_count, pending ? 1 : 0);
    if (pending) list[slot] = j;
}

// ---- The no-hit proof on the reads the team pass hands to the last pass ----
// A read with no alignment within its edit limit has no hit of bwa's, whatever bwa's -m: the
// search cannot find one, and stopping it early only loses hits. The reads pass 2 hands on are
// the longest searches, many of them ancient DNA's unmapped reads.

// The reads of a pass's queue (queue, *queue_count) the proof may take: PENDING where the read
// is at most max_len bases and its edit limit (read_max_diff + extra_edits) at most 31, with its
// search sequence, bounds' place and edit limit written; `status` is 0xff elsewhere (filled
// before).
extern "C" __global__ void candidate_queued_reads(const u32 *__restrict__ queue, const u32 *__restrict__ queue_count,
    const u8 *__restrict__ codes, const u64 *__restrict__ code_start, const u16 *__restrict__ read_len,
    const int *__restrict__ read_max_diff, int extra_edits, int max_len, u8 *seq, u64 *bound_start, u8 *max_edits,
    u8 *status)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= *queue_count) return;
    u32 j = queue[k];
    int len = read_len[j], limit = read_max_diff[j] + extra_edits;
    if (len == 0 || len > max_len || limit < 0 || limit > 31) return;
    status[j] = CAND_PENDING;
    max_edits[j] = (u8)limit;
    place_search_seq(codes, code_start, j, len, seq, bound_start);
}

// The queue without the reads the proof answered (CAND_NO_ALIGNMENT: 0 hits), into `kept`; the
// answered ones counted.
extern "C" __global__ void candidate_drop_proved(const u32 *__restrict__ queue, const u32 *__restrict__ queue_count,
    const u8 *__restrict__ status, int *n_hits, u32 *kept, u32 *kept_count, u32 *proved_count)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    bool live = k < *queue_count;
    u32 j = live ? queue[k] : 0;
    bool proved = live && status[j] == CAND_NO_ALIGNMENT;
    if (proved) n_hits[j] = 0;
    u32 at = claim(kept_count, live && !proved ? 1 : 0);
    if (live && !proved) kept[at] = j;
    claim(proved_count, proved ? 1 : 0);
}

// `kept` back into the queue, and its count.
extern "C" __global__ void candidate_copy_list(const u32 *__restrict__ kept, const u32 *__restrict__ kept_count,
    u32 *queue, u32 *queue_count)
{
    u32 k = blockIdx.x * blockDim.x + threadIdx.x, n = *kept_count;
    if (k < n) queue[k] = kept[k];
    if (k == 0) *queue_count = n;
}

// The sizes of Branch, Found, Reads, Outputs and TreeNode, which the host lays out as C does.
extern "C" __global__ void candidate_sizes(u32 *out)
{
    out[0] = sizeof(Branch);
    out[1] = sizeof(Found);
    out[2] = sizeof(Reads);
    out[3] = sizeof(Outputs);
    out[4] = sizeof(TreeNode);
}
