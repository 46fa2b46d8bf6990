// no_hit: the proof that a read has no alignment within its edit limit anywhere in the genome,
// run before the inexact search on the reads exact_match found no exact match for (a read with
// one has a hit). bwa's hits are alignments within that limit, so a proved read's answer is
// n_aln 0 and it leaves the search's queue. A port of src/search/no_hit.rs (`prove`), which is
// checked against bwa and against the recursive reference of bcuda-dev no-hit in CI.
//
// The read is cut into limit + 1 parts, one of which any alignment within the limit matches
// exactly. Search j matches part j exactly, extends it to the right over the parts after it,
// then to the left over those before it (each of which must hold an edit), over the
// bidirectional index that bwa's BWT of both strands is (bwa-mem's bwt_extend), pruned by
// lower bounds on the edits the read's suffixes and prefixes need. One read per thread: each
// search is a chain of dependent lookups, so many reads in flight hide their latency, and a
// thread that finishes takes the next read from a queue. The depth-first search keeps its
// pending intervals on a stack of NO_HIT_ENTRIES entries in local memory (slot j of a warp's
// threads side by side); a read whose search outgrows it, or takes more than max_lookups
// occurrence lookups, is left to the search, never answered wrongly.

#ifndef NO_HIT_BLOCK_W
#define NO_HIT_BLOCK_W 64
#endif
#ifndef NO_HIT_ENTRIES
#define NO_HIT_ENTRIES 128
#endif
// The longest read the GPU takes (GPU_MAX_LEN): the bounds' arrays hold one byte per position.
#ifndef NO_HIT_MAX_LEN
#define NO_HIT_MAX_LEN 512
#endif
// Most edits a read may be proved for (a stack entry keeps its edits in 5 bits); suffix-array
// rows in 34 bits (genomes up to 8 Gbp: the host turns the pass off above).
#define NO_HIT_MAX_EDITS 31
#define NO_HIT_ROW_BITS 34
#define NO_HIT_ROW_MASK ((1ULL << NO_HIT_ROW_BITS) - 1)

// What a read's proof concluded: no alignment (proved), or bwa's search must decide (an
// alignment found, too many lookups, a full stack, or not tried).
#define PROOF_NONE 0
#define PROOF_MAYBE 1
// The pass's counters (after inexact_order's count of its queue): reads taken, reads left to
// the search (its next queue), reads proved.
#define NO_HIT_TAKEN 1
#define NO_HIT_LEFT 2
#define NO_HIT_PROVED 3

// bwa's bidirectional interval: rows of the string, of its reverse complement, and how many.
struct BiInterval {
    u64 fwd, rev, size;
};

// An interval still to extend from read position i with `used` edits spent: to the right over
// read[i..], or to the left over read[..i] with part_edits of the edits in read[i - 1]'s part.
struct Entry {
    BiInterval ik;
    int i, used, part_edits;
    bool left;
};

// An Entry on the stack: the counters ride above the size's 34 bits.
struct PackedEntry {
    u64 fwd, rev, size_state; // size | i << 34 | used << 44 | part_edits << 49 | left << 54
};

__device__ __forceinline__ PackedEntry pack(const Entry &e)
{
    u64 state = (u64)e.i | (u64)e.used << 10 | (u64)e.part_edits << 15 | (u64)e.left << 20;
    PackedEntry p = {e.ik.fwd, e.ik.rev, e.ik.size | state << NO_HIT_ROW_BITS};
    return p;
}

__device__ __forceinline__ Entry unpack(const PackedEntry &p)
{
    u64 state = p.size_state >> NO_HIT_ROW_BITS;
    Entry e = {{p.fwd, p.rev, p.size_state & NO_HIT_ROW_MASK}, (int)(state & 1023), (int)(state >> 10 & 31),
        (int)(state >> 15 & 31), (state >> 20 & 1) != 0};
    return e;
}

// One read's proof: the BWT, the read and its limit, the bounds, the search under way (part
// `part` from `start`, the edits the parts before it need), its stack and its lookups.
struct Proof {
    const u32 *words;
    u64 primary;
    const u64 *l2;
    const u8 *read;
    int len, limit, parts;
    u8 after[NO_HIT_MAX_LEN + 1]; // edits read[i..] needs at least (saturated at 255)
    u8 before[NO_HIT_MAX_LEN + 1]; // edits read[..i] needs at least
    int part, start, before_start;
    PackedEntry stack[NO_HIT_ENTRIES];
    int depth;
    u32 lookups;
};

// The interval of the one-base string c.
__device__ __forceinline__ BiInterval base_interval(const Proof &p, int c)
{
    BiInterval ik = {p.l2[c] + 1, p.l2[3 - c] + 1, p.l2[c + 1] - p.l2[c]};
    return ik;
}

// The four extensions of ik by one base (bwt_extend), two occurrence lookups: prepended
// (back), where out[c] is c·W, or appended, where out[c] is W·(3-c).
__device__ void extend(Proof &p, const BiInterval &ik, bool back, BiInterval out[4])
{
    u64 searched = back ? ik.fwd : ik.rev;
    u64 other = back ? ik.rev : ik.fwd;
    u64 tk[4], tl[4];
    occ4(p.words, p.primary, searched - 1, tk);
    occ4(p.words, p.primary, searched - 1 + ik.size, tl);
    p.lookups += 2;
    bool holds_primary = searched <= p.primary && searched + ik.size > p.primary;
    u64 next = other + (holds_primary ? 1 : 0);
    for (int c = 3; c >= 0; --c) {
        u64 searched_c = p.l2[c] + 1 + tk[c];
        u64 size = tl[c] - tk[c];
        out[c].fwd = back ? searched_c : next;
        out[c].rev = back ? next : searched_c;
        out[c].size = size;
        next += size;
    }
}

// The piece so far (`grown`: whether there is one) grown by base c, prepended or appended;
// false when it stops occurring.
__device__ bool grow(Proof &p, BiInterval &ik, bool grown, int c, bool back)
{
    if (c > 3) return false;
    if (!grown) {
        ik = base_interval(p, c);
        return true;
    }
    BiInterval out[4];
    extend(p, ik, back, out);
    ik = out[back ? c : 3 - c];
    return ik.size > 0;
}

// The bounds: the read cut greedily into pieces that each fail to occur by their last base
// (from the right end for `after`, from the left for `before`); a part of the read needs an
// edit in every such piece it holds whole.
__device__ void compute_bounds(Proof &p)
{
    BiInterval ik;
    bool grown = false;
    int pieces = 0;
    p.after[p.len] = 0;
    for (int i = p.len - 1; i >= 0; --i) {
        grown = grow(p, ik, grown, p.read[i], true);
        if (!grown && pieces < 255) ++pieces;
        p.after[i] = (u8)pieces;
    }
    grown = false;
    pieces = 0;
    p.before[0] = 0;
    for (int i = 0; i < p.len; ++i) {
        grown = grow(p, ik, grown, p.read[i], false);
        if (!grown && pieces < 255) ++pieces;
        p.before[i + 1] = (u8)pieces;
    }
}

__device__ __forceinline__ int part_start(const Proof &p, int j) { return j * p.len / p.parts; }

// The part of read position i: the last j with j * len < (i + 1) * parts.
__device__ __forceinline__ int part_of(const Proof &p, int i) { return ((i + 1) * p.parts - 1) / p.len; }

// The interval of read[start..end], matched exactly; false when it does not occur.
__device__ bool exact_part(Proof &p, int start, int end, BiInterval &ik)
{
    int last = p.read[end - 1];
    if (last > 3) return false;
    ik = base_interval(p, last);
    for (int i = end - 2; i >= start; --i) {
        if (!grow(p, ik, true, p.read[i], true)) return false;
    }
    return true;
}

// Stacks e; false when the stack is full.
__device__ __forceinline__ bool push(Proof &p, const Entry &e)
{
    if (p.depth == NO_HIT_ENTRIES) return false;
    p.stack[p.depth++] = pack(e);
    return true;
}

// Stacks ik to extend over read[..i] with `used` edits, part_edits of them in read[i - 1]'s
// part, unless the bounds rule it out (that part needs an edit, and so does every part before
// it); false when the stack is full.
__device__ bool push_left(Proof &p, const BiInterval &ik, int i, int used, int part_edits)
{
    if (i > 0) {
        int open = part_of(p, i - 1) + (part_edits == 0 ? 1 : 0);
        int need = p.before[i] > open ? p.before[i] : open;
        if (used + need > p.limit) return true;
    }
    Entry e = {ik, i, used, part_edits, true};
    return push(p, e);
}

// Stacks ik to extend over read[i..] with `used` edits, unless the bounds rule it out; at the
// read's end it turns to the left, from the search's part on.
__device__ bool push_right(Proof &p, const BiInterval &ik, int i, int used)
{
    if (used + p.after[i] + p.before_start > p.limit) return true;
    if (i == p.len) return push_left(p, ik, p.start, used, 0);
    Entry e = {ik, i, used, 0, false};
    return push(p, e);
}

// read[i - 1] taken at `cost` edits, going left; a part it finishes must hold an edit.
__device__ bool consume(Proof &p, const BiInterval &ik, int i, int used, int part_edits, int cost)
{
    int edits = part_edits + cost;
    if (part_start(p, part_of(p, i - 1)) != i - 1) return push_left(p, ik, i - 1, used + cost, edits);
    return edits == 0 || push_left(p, ik, i - 1, used + cost, 0);
}

// Stacks the children of a rightward entry, last the one popped first: the read's own base,
// then mismatches, reference bases left out of the read (deletions), and the read's base left
// out of the reference (an insertion), each in base order. False when the stack is full.
__device__ bool expand_right(Proof &p, const Entry &e)
{
    BiInterval children[4]; // children[3 - b]: W·b
    extend(p, e.ik, false, children);
    int base = p.read[e.i];
    if (e.used < p.limit) {
        if (!push_right(p, e.ik, e.i + 1, e.used + 1)) return false;
        for (int b = 3; b >= 0; --b)
            if (children[3 - b].size > 0 && !push_right(p, children[3 - b], e.i, e.used + 1)) return false;
        for (int b = 3; b >= 0; --b)
            if (b != base && children[3 - b].size > 0 && !push_right(p, children[3 - b], e.i + 1, e.used + 1)) return false;
    }
    if (base < 4 && children[3 - base].size > 0) return push_right(p, children[3 - base], e.i + 1, e.used);
    return true;
}

// Stacks the children of a leftward entry, in expand_right's order.
__device__ bool expand_left(Proof &p, const Entry &e)
{
    BiInterval children[4]; // children[b]: b·W
    extend(p, e.ik, true, children);
    int base = p.read[e.i - 1];
    if (e.used < p.limit) {
        if (!consume(p, e.ik, e.i, e.used, e.part_edits, 1)) return false;
        for (int b = 3; b >= 0; --b)
            if (children[b].size > 0 && !push_left(p, children[b], e.i, e.used + 1, e.part_edits + 1)) return false;
        for (int b = 3; b >= 0; --b)
            if (b != base && children[b].size > 0 && !consume(p, children[b], e.i, e.used, e.part_edits, 1)) return false;
    }
    if (base < 4 && children[base].size > 0) return consume(p, children[base], e.i, e.used, e.part_edits, 0);
    return true;
}

// One search from part j's interval ik (ending at `end`) until its stack is empty (PROOF_NONE)
// or it stops: an alignment found, more than max_lookups lookups, or a full stack.
__device__ int run_search(Proof &p, const BiInterval &ik, int end, u32 max_lookups)
{
    p.depth = 0;
    if (!push_right(p, ik, end, 0)) return PROOF_MAYBE;
    while (p.depth > 0) {
        if (p.lookups > max_lookups) return PROOF_MAYBE;
        Entry e = unpack(p.stack[--p.depth]);
        if (e.left && e.i == 0) return PROOF_MAYBE; // the whole read aligned
        bool room = e.left ? expand_left(p, e) : expand_right(p, e);
        if (!room) return PROOF_MAYBE;
    }
    return PROOF_NONE;
}

// Whether p's read has no alignment within p.limit edits (PROOF_NONE) or may have one.
__device__ int prove(Proof &p, u32 max_lookups)
{
    if (p.len < p.parts || p.limit > NO_HIT_MAX_EDITS) return PROOF_MAYBE; // not tried
    if (p.limit < 0 || p.len > NO_HIT_MAX_LEN) return PROOF_MAYBE; // guard
    compute_bounds(p);
    if (p.after[0] > p.limit) return PROOF_NONE;
    for (int j = 0; j < p.parts; ++j) {
        int end = j + 1 < p.parts ? part_start(p, j + 1) : p.len;
        p.part = j;
        p.start = part_start(p, j);
        p.before_start = p.before[p.start] > j ? p.before[p.start] : j;
        BiInterval ik;
        if (!exact_part(p, p.start, end, ik)) continue;
        if (run_search(p, ik, end, max_lookups) != PROOF_NONE) return PROOF_MAYBE;
    }
    return PROOF_NONE;
}

// The pass: each thread takes the next of the `queue` reads without an exact match (the first
// order_counters[0] of it, as inexact_order left it; counters[NO_HIT_TAKEN] counts those
// taken) and proves it with read_max_diff[id] + extra_edits edits (extra_edits: bwa's gap
// extensions when they do not count against -n) and at most max_lookups lookups. A proved
// read gets 0 hits; the others go on to `next_queue`, the first pass's (counters[NO_HIT_LEFT]).
extern "C" __global__ void __launch_bounds__(NO_HIT_BLOCK_W) no_hit_proof(
    const u32 *__restrict__ words, u64 primary, const u64 *__restrict__ l2,
    const u8 *__restrict__ codes, const u64 *__restrict__ code_start, const u16 *__restrict__ read_len,
    const int *__restrict__ read_max_diff, int extra_edits, u32 max_lookups,
    const u32 *__restrict__ queue, const u32 *__restrict__ order_counters, u32 *__restrict__ counters,
    u32 *__restrict__ next_queue, int *__restrict__ n_hits, unsigned long long *__restrict__ lookup_count)
{
    Proof p;
    p.words = words;
    p.primary = primary;
    p.l2 = l2;
    u64 lookups = 0;
    u32 candidates = order_counters[0];
    for (u32 q = atomicAdd(&counters[NO_HIT_TAKEN], 1); q < candidates; q = atomicAdd(&counters[NO_HIT_TAKEN], 1)) {
        u32 id = queue[q];
        p.read = codes + code_start[id];
        p.len = read_len[id];
        p.limit = read_max_diff[id] + extra_edits;
        p.parts = p.limit + 1;
        p.lookups = 0;
        if (prove(p, max_lookups) == PROOF_NONE) {
            n_hits[id] = 0;
            atomicAdd(&counters[NO_HIT_PROVED], 1);
        } else {
            next_queue[atomicAdd(&counters[NO_HIT_LEFT], 1)] = id;
        }
        lookups += p.lookups;
    }
    if (lookups) atomicAdd(lookup_count, lookups);
}

// After no_hit_proof: the reads with an exact match (the rest of `queue`, n in all) follow the
// reads it left in the first pass's queue, whose count (next_counters[0]) it sets.
extern "C" __global__ void no_hit_join(const u32 *__restrict__ queue, u32 n, const u32 *__restrict__ order_counters,
    const u32 *__restrict__ counters, u32 *__restrict__ next_queue, u32 *__restrict__ next_counters)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    u32 candidates = order_counters[0], left = counters[NO_HIT_LEFT];
    if (j < n - candidates) next_queue[left + j] = queue[candidates + j];
    if (j == 0) next_counters[0] = left + (n - candidates);
}
