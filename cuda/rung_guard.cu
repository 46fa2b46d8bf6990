// The rungs' -m guard as each read's search ends (cuda/inexact_match.cu's rung_next hands a read
// on unless this proves its answer is bwa's): src/gpu/rungs.rs compiles it after
// inexact_match.cu and m_guard.cuh, whose bound it computes.

// A read whose best hit scores 0 or s_mm is proved without the counters where a gap costs more
// than two mismatches: bwa pushes only at pops of at most one mismatch (before its first hit it
// pops nothing scoring more than it; after, it allows d* + 1 differences), and strings of one
// mismatch number (len + 1)(4 len + 1) at most, so its stack holds 1 + 8 of those or fewer.
__device__ __forceinline__ bool rung_one_mismatch_proved(const Read &r, int best_score)
{
    const GapOpt &opt = r.opt;
    if (best_score > opt.s_mm || opt.s_mm <= 0 || opt.s_gapo <= 2 * opt.s_mm || (opt.mode & MODE_NONSTOP)) return false;
    u64 len = r.len;
    return 1 + 8 * (len + 1) * (4 * len + 1) <= (u64)max(opt.max_entries, 0);
}

// The guard's rows in the team's counters (GuardRows) for a read of `len` bases.
__device__ __forceinline__ GuardRows guard_rows(u32 *guard, int len)
{
    int row = guard_row(len);
    u32 *born1 = guard + GUARD_HEAD, *births2 = born1 + 2 * row;
    int *floor = (int *)births2 + row;
    GuardRows g = {born1, born1 + row, births2, floor, (u64 *)(floor + row), (unsigned long long *)(guard + GUARD_SUM), guard + GUARD_UNPROVABLE};
    return g;
}

// Further D array k of a read of `len` bases (`codes`, as read_widths takes them): bwt_cal_width
// from read position (k + 1) x FURTHER_STARTS, into `cells` from k x (len + 1). Out of line, so
// that its lookups' registers are not the bound's.
__device__ __noinline__ void further_d_array(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u8 *codes, int len, int k, u64 *cells, u64 *lookups)
{
    u64 found = 0;
    cal_width(words, primary, seq_len, l2, codes, len - (k + 1) * FURTHER_STARTS, cells + (u64)k * (len + 1), found);
    *lookups += found;
}

// The guard's second stage (counted_bound's in m_guard.rs), for a read whose bound with bwa's D
// arrays `d` is over `max_entries`: the further D arrays of the read (`codes`, as read_widths
// takes them; one a lane) into the lanes' buffers (`scratch`, `scratch_cells` of them, free once
// the search has ended), then the bound with them too, its tables after them. Out of line, its
// arguments by value: the search loop keeps its registers for a call a few reads in a thousand
// make. Every lane returns the same.
__device__ __noinline__ bool further_bound_within(u32 *guard, DArrays d, u64 max_entries, const u8 *seq, int len, const u8 *codes,
    const u32 *words, u64 primary, u64 seq_len, const u64 *l2, u64 *lookups, u64 *scratch, u64 scratch_cells, int lane, int lanes)
{
    d.further = scratch;
    d.n_further = further_arrays(len);
    u64 arrays_cells = (u64)d.n_further * (len + 1);
    if (arrays_cells + cap_table_cells(d_array_count(d, len), len) > scratch_cells) return false;
    __syncthreads();
    for (int k = lane; k < d.n_further; k += lanes) further_d_array(words, primary, seq_len, l2, codes, len, k, scratch, lookups);
    __syncthreads();
    return guard_bound(guard_rows(guard, len), d, guard[GUARD_POPS], seq, len, scratch + arrays_cells, lane, lanes) <= max_entries;
}

// Whether the -m guard proves a read whose rung answered under its own limit (first: its first
// hit): one mismatch by its class, or two where the rung counted its entry points (guard_count)
// and their bound (cuda/m_guard.cuh) is within -m: first with the read's D arrays as read_widths
// computed them (`cells`, `seed_cells`), then, where that is over -m, with the further D arrays of
// its `codes` too. The bound's tables go in the lanes' buffers (`lane_bufs`, free once the search
// has ended); `bounded` counts the reads whose bound it computes. Every lane returns the same.
__device__ __forceinline__ bool guard_proves(const Read &r, const Hit &first, const u8 *codes, const u64 *cells, const u64 *seed_cells, Entry *lane_bufs, int stride, const Team &t,
    unsigned long long *bounded)
{
    const GapOpt &opt = r.opt;
    if (rung_guard < 2 || rung_one_mismatch_proved(r, hit_score(first))) return true;
    bool applies = r.guard && hit_score(first) == 2 * opt.s_mm && opt.s_gapo > 3 * opt.s_mm && !(opt.mode & MODE_NONSTOP);
    if (!applies || r.guard[GUARD_UNPROVABLE]) return false;
    DArrays d = {cells, seed_cells, r.use_seed ? r.len - opt.seed_len : r.len, nullptr, 0};
    u64 max_entries = (u64)max(opt.max_entries, 0), *scratch = (u64 *)lane_bufs;
    u64 scratch_cells = (u64)t.size * stride * sizeof(Entry) / sizeof(u64);
    if (cap_table_cells(d_array_count(d, r.len), r.len) > scratch_cells) return false;
    if (t.lane == 0) atomicAdd(bounded, 1ULL);
    u64 bound = guard_bound(guard_rows(r.guard, r.len), d, r.guard[GUARD_POPS], r.seq, r.len, scratch, t.lane, t.size);
    if (bound <= max_entries || bound == ~0ULL || rung_guard < 3) return bound <= max_entries;
    return further_bound_within(r.guard, d, max_entries, r.seq, r.len, codes, r.words, r.primary, r.seq_len, r.l2, r.lookups, scratch, scratch_cells,
        t.lane, t.size);
}

// guard_proves' answer, or, with rung_guard 4 (a measurement hook), its work done and every answer
// taken: what the guard costs apart from the reads it refuses (not exact where -m binds). Its
// team's time in it (nanoseconds), the reads it judged and those it bounded go to `counts`.
__device__ __forceinline__ bool rung_guard_proves(const Read &r, const Hit &first, const u8 *codes, const u64 *cells, const u64 *seed_cells, Entry *lane_bufs, int stride, const Team &t,
    unsigned long long *counts)
{
    u64 started = global_ns();
    bool proved = guard_proves(r, first, codes, cells, seed_cells, lane_bufs, stride, t, counts + 2);
    if (t.lane == 0) {
        atomicAdd(counts, (unsigned long long)(global_ns() - started));
        atomicAdd(counts + 1, 1ULL);
    }
    return rung_guard == 4 || proved;
}
