// cuda/candidates.cu built for the CPU: its kernels run as one thread after another, so that
// dev/tests/candidates_kernel.rs can check the alignments they find against the model
// (src/search/pigeonhole.rs) without a GPU. CUDA's keywords become nothing, its atomics plain
// updates.
//   host BWT READS rung S_MM S_GAPO S_GAPE MAX_GAPO: every alignment of each read within its
//     budget (no cap on its extensions), a line each: "R COL COL ...", a column B0-B3 (a
//     string base against the read's), I (an inserted read base) or D0-D3 (a deleted string
//     base); "skip R" for a read with fewer bases than parts.
//   host BWT READS tree S_MM S_GAPO S_GAPE MAX_GAPO: the rung as above with each read's
//     alignments listed (found_head, found_next), then candidate_rung_end and candidate_tree: a
//     line a read, "tree R LINK,FIRST_CHILD,NEXT_SIBLING ..." (its tree's nodes, the root
//     first) where the tree took it, else "status R STATUS".
//   host BWT READS proof MOST_EXTENSIONS: the no-hit proof (1 an edit, gaps unlimited, stopping
//     at the first alignment), a line a read: "proof R ANY OVER" (OVER: its extensions
//     reached MOST_EXTENSIONS), or "skip R".
//   host BWT LAST_PASS last QUEUE EXTRA_EDITS MAX_LEN MOST_EXTENSIONS CAPACITY: the no-hit
//     proof before the last pass as src/gpu/proof_pass.rs launches it (candidate_queued_reads,
//     candidate_bounds, the rung in CAPACITY branches a round, candidate_proof_end,
//     candidate_drop_proved, candidate_copy_list) over the reads QUEUE lists (their numbers),
//     LAST_PASS a line a read, "MAX_DIFF N_HITS CODES" (CODES as read, not reverse
//     complemented). Then a line a read, "read R STATUS EXTENSIONS N_HITS" (EXTENSIONS means
//     nothing for a read the rung did not take), and for each read the proof took its bounds,
//     "bounds R AFTER... BEFORE..."; then "queue COUNT J J ...", "counts KEPT PROVED" and
//     "overflow X" (the rung's overflow counter).
// READS has a line per read, "BUDGET MAX_EDITS CODES" (CODES: one digit a base, 4 for N). rung
// and proof end with "lookups BOUNDS ROUNDS": the bounds' occurrence lookups, then the
// searches'. Every read is searched at its line's budget, whatever its bounds (the ladder's
// first budget) say.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "candidates.cu"
#include "../bwt_file.h"

// The batch as the kernels take it, and each line's budget (candidate_bounds sets its own).
struct Batch {
    std::vector<u8> codes, bounds, max_edits;
    std::vector<u64> code_start, bound_start;
    std::vector<u16> len, budget, line_budget;

    u32 n() const { return (u32)len.size(); }

    Reads reads() const
    {
        Reads rs = {codes.data(), code_start.data(), len.data(), bounds.data(), bound_start.data(), budget.data(),
            max_edits.data()};
        return rs;
    }
};

static Batch read_batch(const char *path)
{
    Batch b;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        int budget, max_edits;
        std::string seq;
        fields >> budget >> max_edits >> seq;
        b.code_start.push_back(b.codes.size());
        for (char c : seq) b.codes.push_back((u8)(c - '0'));
        b.bound_start.push_back(b.bounds.size());
        b.bounds.resize(b.bounds.size() + 2 * (seq.size() + 1));
        b.len.push_back((u16)seq.size());
        b.line_budget.push_back((u16)budget);
        b.max_edits.push_back((u8)max_edits);
    }
    b.budget = b.line_budget;
    return b;
}

// The counters as the kernels take them: u32s, with the lookups a u64 at CNT_LOOKUPS.
struct Counters {
    u64 words[4];
    u32 *at() { return (u32 *)words; }
    u64 lookups() { return *(u64 *)(at() + CNT_LOOKUPS); }
};

// What the searches left: the nodes, the alignments found (with each read's list of them where
// asked for), each read's flags, best score and extensions, and the rung's counters.
struct Outcome {
    std::vector<u64> nodes;
    std::vector<Found> found;
    std::vector<u32> found_head, found_next;
    std::vector<u8> any;
    std::vector<u32> best, extensions;
    Counters counters;
    u64 bound_lookups, round_lookups;
};

// Every read's bounds (its line's budget kept: every read is searched at it, exact or not).
static u64 bounds_pass(const BwtFile &bwt, Batch &b, const Penalties &p)
{
    Counters counters = {};
    std::vector<u8> status(b.n(), CAND_PENDING);
    std::vector<u32> list(b.n());
    u32 listed = 0;
    for (u32 r = 0; r < b.n(); ++r) {
        blockIdx.x = r;
        candidate_bounds(bwt.words.data(), bwt.primary, bwt.l2, b.reads(), p, b.n(), 0, 0, b.bounds.data(), b.budget.data(),
            status.data(), list.data(), &listed, counters.at());
    }
    blockIdx.x = 0;
    b.budget = b.line_budget;
    return counters.lookups();
}

// The searches of every read with buffers of `capacity` entries each (with `lists`, each read's
// alignments listed); false where one ran out.
static bool search(const BwtFile &bwt, const Batch &b, const Penalties &p, u32 most_extensions, bool proof,
    bool lists, u32 capacity, Outcome &out)
{
    std::vector<Branch> frontier[2] = {std::vector<Branch>(capacity), std::vector<Branch>(capacity)};
    out.nodes.assign(capacity, 0);
    out.found.assign(capacity, Found{});
    out.any.assign(b.n(), 0);
    out.extensions.assign(b.n(), 0);
    out.best.assign(b.n(), 0);
    out.found_head.assign(lists ? b.n() : 0, 0);
    out.found_next.assign(lists ? capacity : 0, 0);
    std::vector<u32> list(b.n()), counts(1 << 14, 0);
    for (u32 r = 0; r < b.n(); ++r) list[r] = r;
    u32 n = b.n();
    out.counters = {};
    Counters &counters = out.counters;
    Outputs o = {frontier[0].data(), capacity, out.nodes.data(), capacity, out.found.data(), capacity, counters.at(),
        out.best.data(), out.any.data(), lists ? out.found_head.data() : nullptr,
        lists ? out.found_next.data() : nullptr};
    for (u32 k = 0; k < n; ++k) {
        blockIdx.x = k;
        candidate_seed(bwt.l2, b.reads(), p, list.data(), &n, counts.data(), frontier[0].data(), o,
            out.extensions.data());
    }
    blockIdx.x = 0;
    if (counters.at()[CNT_OVERFLOW]) return false;
    for (u32 round = 0; counts[round] > 0; ++round) {
        if (round + 2 >= counts.size()) {
            fprintf(stderr, "more than %zu rounds\n", counts.size() - 2);
            exit(1);
        }
        o.next = frontier[(round + 1) % 2].data();
        candidate_round(bwt.words.data(), bwt.primary, bwt.l2, b.reads(), p, round, frontier[round % 2].data(),
            counts.data(), o, out.extensions.data(), most_extensions, proof ? 1 : 0);
        if (counters.at()[CNT_OVERFLOW]) return false;
    }
    out.nodes.resize(counters.at()[CNT_NODES]);
    out.found.resize(counters.at()[CNT_FOUND]);
    out.round_lookups = counters.lookups();
    return true;
}

// The first position of part j of read r, cut as the kernels cut it at its budget.
static int part_start_of(const Batch &b, const Penalties &p, u32 r, int j)
{
    int len = b.len[r], parts = parts_for(b.budget[r], b.max_edits[r], cheapest(p));
    return j < parts ? part_start(j, len, parts) : len;
}

static void print_col(int col)
{
    col &= ~COL_LEFT;
    if (col < COL_INS) printf(" B%d", col);
    else if (col == COL_INS) printf(" I");
    else printf(" D%d", col - COL_DEL);
}

// Alignment f: the columns on its path (left of the part from the last node back, leftmost
// first; right of it rightmost first), the part's bases between them.
static void print_found(const Batch &b, const Penalties &p, const Outcome &out, const Found &f)
{
    std::vector<int> left, right;
    for (u32 n = f.node; n != NO_NODE; n = (u32)out.nodes[n]) {
        int col = (int)(out.nodes[n] >> 32);
        (col & COL_LEFT ? left : right).push_back(col);
    }
    printf("%u", f.read);
    for (int col : left) print_col(col);
    const u8 *read = b.codes.data() + b.code_start[f.read];
    int start = part_start_of(b, p, f.read, f.part), end = part_start_of(b, p, f.read, f.part + 1);
    for (int i = start; i < end; ++i) print_col(read[i]);
    for (auto c = right.rbegin(); c != right.rend(); ++c) print_col(*c);
    printf("\n");
}

// The listed reads 0..n, as the ladder's kernels take them.
static std::vector<u32> every_read(u32 n)
{
    std::vector<u32> list(n);
    for (u32 r = 0; r < n; ++r) list[r] = r;
    return list;
}

// Each read's state after the rung (candidate_rung_end with no limit on extensions or score):
// answered wherever its best score plus a mismatch fits its budget.
static std::vector<u8> rung_end(Batch &b, const Penalties &p, Outcome &out)
{
    std::vector<u8> status(b.n(), CAND_PENDING);
    std::vector<u32> list = every_read(b.n()), next(b.n()), proof(b.n());
    u32 n = b.n(), n_next = 0, n_proof = 0;
    for (u32 k = 0; k < n; ++k) {
        blockIdx.x = k;
        candidate_rung_end(list.data(), &n, out.best.data(), out.extensions.data(), ~0u, p.s_mm, 1 << 30,
            b.max_edits.data(), b.budget.data(), status.data(), next.data(), &n_next, proof.data(), &n_proof);
    }
    blockIdx.x = 0;
    return status;
}

// candidate_tree over every read into `tree` (`capacity` nodes); returns the nodes it claimed.
static u32 tree_pass(const Batch &b, const Penalties &p, Outcome &out, TreeNode *tree, u32 capacity,
    std::vector<u8> &status, std::vector<u32> &start)
{
    std::vector<u32> list = every_read(b.n());
    u32 n = b.n(), used = 0;
    start.assign(b.n(), TREE_NONE);
    for (u32 k = 0; k < n; ++k) {
        blockIdx.x = k;
        candidate_tree(list.data(), &n, b.reads(), p, out.nodes.data(), out.found.data(), out.found_head.data(),
            out.found_next.data(), out.counters.at(), ~0u, tree, capacity, &used, start.data(), status.data());
    }
    blockIdx.x = 0;
    return used;
}

// Read r's tree: its nodes (all reachable from its root, so the highest one reached is the
// last it took), the root first.
static void print_tree(u32 r, const TreeNode *t)
{
    u32 n = 1;
    std::vector<u32> todo = {0};
    while (!todo.empty()) {
        u32 x = todo.back();
        todo.pop_back();
        n = x + 1 > n ? x + 1 : n;
        for (u32 c = t[x].first_child; c != TREE_NONE; c = t[c].next_sibling) todo.push_back(c);
    }
    printf("tree %u", r);
    for (u32 x = 0; x < n; ++x) printf(" %u,%u,%u", t[x].link, t[x].first_child, t[x].next_sibling);
    printf("\n");
}

// The trees of the reads the rung answered. A first pass with no room measures the nodes they
// claim (and must leave every one of them), the second builds them in that many.
static void trees(Batch &b, const Penalties &p, Outcome &out)
{
    std::vector<u8> answered = rung_end(b, p, out), status = answered;
    std::vector<u32> start;
    TreeNode none;
    u32 need = tree_pass(b, p, out, &none, 0, status, start);
    for (u32 r = 0; r < b.n(); ++r)
        if (answered[r] == CAND_ANSWERED && status[r] != CAND_LEFT_TREE) {
            fprintf(stderr, "read %u: a tree with no room\n", r);
            exit(1);
        }
    std::vector<TreeNode> tree(need);
    status = answered;
    if (tree_pass(b, p, out, tree.data(), need, status, start) != need) exit(1);
    for (u32 r = 0; r < b.n(); ++r) {
        if (status[r] == CAND_ANSWERED) print_tree(r, tree.data() + start[r]);
        else printf("status %u %d\n", r, status[r]);
    }
}

// ---- The no-hit proof before the last pass, launched as src/gpu/proof_pass.rs launches it ----

// The most rounds the counts hold room for (candidate_buffers.rs's MAX_ROUNDS).
static const u32 MAX_ROUNDS = 1024;

// The last pass's batch: each read's codes as read (N as 4, not yet reverse complemented), its
// edit limit before the extra edits, and its hit count.
struct LastPass {
    std::vector<u8> codes;
    std::vector<u64> code_start;
    std::vector<u16> len;
    std::vector<int> max_diff, n_hits;

    u32 n() const { return (u32)len.size(); }
};

static LastPass read_last_pass(const char *path)
{
    LastPass b;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        int max_diff, n_hits;
        std::string seq;
        fields >> max_diff >> n_hits >> seq;
        b.code_start.push_back(b.codes.size());
        for (char c : seq) b.codes.push_back((u8)(c - '0'));
        b.len.push_back((u16)seq.size());
        b.max_diff.push_back(max_diff);
        b.n_hits.push_back(n_hits);
    }
    return b;
}

// A launch as cfg(n) makes it: blocks of 256 threads, so the threads past n run too.
template <typename Kernel> static void launch(u32 n, Kernel kernel)
{
    u32 threads = (n > 0 ? n + 255 : 256) / 256 * 256;
    for (u32 k = 0; k < threads; ++k) {
        blockIdx.x = k;
        kernel();
    }
    blockIdx.x = 0;
}

// n entries of byte x: the GPU's buffers hold anything before a kernel writes them, so a kernel
// that reads what no kernel wrote should show it.
template <typename T> static void fill(std::vector<T> &v, size_t n, u8 x)
{
    v.resize(n);
    memset((void *)v.data(), x, n * sizeof(T));
}

// The proof's buffers (candidate_buffers.rs's): lists 0 (the proof's), 1 (kept) and 2 (unused:
// its count is the proved); counts, counters and the lists' counts zeroed as reserve zeroes
// them, status 0xff as proof_pass poisons it, the rest garbage.
struct ProofBuffers {
    std::vector<u8> seq, bounds, max_edits, status, any;
    std::vector<u64> bound_start;
    std::vector<u16> budget;
    std::vector<u32> best, extensions, counts, lists[3];
    u32 list_counts[3];
    std::vector<Branch> branches[2];
    std::vector<Found> found;
    Counters counters;

    ProofBuffers(const LastPass &b, u32 capacity) : list_counts{0, 0, 0}, counters{}
    {
        size_t n = b.n(), n_codes = b.codes.size();
        fill(seq, n_codes, 0xab);
        fill(bounds, 2 * (n_codes + n), 0xab);
        fill(max_edits, n, 0xab);
        fill(status, n, 0xff);
        fill(any, n, 0xab);
        fill(bound_start, n, 0xab);
        fill(budget, n, 0xab);
        fill(best, n, 0xab);
        fill(extensions, n, 0xab);
        counts.assign(MAX_ROUNDS + 2, 0);
        for (auto &list : lists) fill(list, n, 0xab);
        for (auto &branch : branches) fill(branch, capacity, 0xab);
        // proof_pass.rs's room for alignments: 8 a read.
        fill(found, 8 * n, 0xab);
    }

    Reads reads(const LastPass &b)
    {
        Reads rs = {seq.data(), b.code_start.data(), b.len.data(), bounds.data(), bound_start.data(), budget.data(),
            max_edits.data()};
        return rs;
    }
};

// An edit each, gap opens unlimited: proof_pass.rs's UNIT.
static const Penalties UNIT = {1, 1, 1, 1 << 30};

// candidate_queued_reads, then candidate_bounds: the queue's reads the proof takes, in list 0
// where they do not occur whole.
static void take_queue(const BwtFile &bwt, const LastPass &b, ProofBuffers &pb, const std::vector<u32> &queue,
    const u32 *queue_count, int extra, int max_len)
{
    Reads rs = pb.reads(b);
    launch(b.n(), [&] {
        candidate_queued_reads(queue.data(), queue_count, b.codes.data(), b.code_start.data(), b.len.data(),
            b.max_diff.data(), extra, max_len, pb.seq.data(), pb.bound_start.data(), pb.max_edits.data(),
            pb.status.data());
    });
    launch(b.n(), [&] {
        candidate_bounds(bwt.words.data(), bwt.primary, bwt.l2, rs, UNIT, b.n(), 0, 1, pb.bounds.data(),
            pb.budget.data(), pb.status.data(), pb.lists[0].data(), &pb.list_counts[0], pb.counters.at());
    });
}

// The proof's rung over list 0 in buffers of `capacity` branches: candidate_seed, the rounds
// proof_pass.rs launches (the batch's longest read plus 33: a branch extends once a read base
// and once a deleted base), each read's searches stopping at its first alignment, no nodes
// kept; then candidate_proof_end. Exits where a branch outlived the rounds (its read might
// have had an alignment the proof never reached).
static void proof_rung(const BwtFile &bwt, const LastPass &b, ProofBuffers &pb, u32 most_extensions, u32 capacity)
{
    Reads rs = pb.reads(b);
    Outputs o = {pb.branches[0].data(), capacity, nullptr, 0, pb.found.data(), (u32)pb.found.size(),
        pb.counters.at(), pb.best.data(), pb.any.data(), nullptr, nullptr};
    launch(b.n(), [&] {
        candidate_seed(bwt.l2, rs, UNIT, pb.lists[0].data(), &pb.list_counts[0], pb.counts.data(),
            pb.branches[0].data(), o, pb.extensions.data());
    });
    u32 longest = 0;
    for (u16 len : b.len) longest = len > longest ? len : longest;
    u32 rounds = longest + 33 < MAX_ROUNDS ? longest + 33 : MAX_ROUNDS;
    for (u32 round = 0; round < rounds; ++round) {
        o.next = pb.branches[(round + 1) % 2].data();
        candidate_round(bwt.words.data(), bwt.primary, bwt.l2, rs, UNIT, round, pb.branches[round % 2].data(),
            pb.counts.data(), o, pb.extensions.data(), most_extensions, 1);
    }
    if (pb.counts[rounds] > 0) {
        fprintf(stderr, "%u branches after the last of %u rounds\n", pb.counts[rounds], rounds);
        exit(1);
    }
    launch(b.n(), [&] {
        candidate_proof_end(pb.lists[0].data(), &pb.list_counts[0], pb.any.data(), pb.extensions.data(),
            most_extensions, pb.status.data());
    });
}

// candidate_drop_proved, then candidate_copy_list: the proved reads out of the queue (kept in
// list 1), their hit counts 0.
static void drop_proved(LastPass &b, ProofBuffers &pb, std::vector<u32> &queue, u32 *queue_count)
{
    launch(b.n(), [&] {
        candidate_drop_proved(queue.data(), queue_count, pb.status.data(), b.n_hits.data(), pb.lists[1].data(),
            &pb.list_counts[1], &pb.list_counts[2]);
    });
    launch(b.n(), [&] { candidate_copy_list(pb.lists[1].data(), &pb.list_counts[1], queue.data(), queue_count); });
}

// host BWT READS last QUEUE EXTRA_EDITS MAX_LEN MOST_EXTENSIONS CAPACITY (see the top).
static int last_pass(const BwtFile &bwt, char **argv)
{
    LastPass b = read_last_pass(argv[2]);
    std::vector<u32> queue(b.n(), 0xabababab);
    u32 queue_count = 0;
    std::ifstream in(argv[4]);
    for (u32 j; in >> j;) queue[queue_count++] = j;
    int extra = atoi(argv[5]), max_len = atoi(argv[6]);
    u32 most_extensions = (u32)strtoul(argv[7], nullptr, 10), capacity = (u32)strtoul(argv[8], nullptr, 10);
    ProofBuffers pb(b, capacity);
    take_queue(bwt, b, pb, queue, &queue_count, extra, max_len);
    proof_rung(bwt, b, pb, most_extensions, capacity);
    drop_proved(b, pb, queue, &queue_count);
    for (u32 r = 0; r < b.n(); ++r) {
        printf("read %u %d %u %d\n", r, pb.status[r], pb.extensions[r], b.n_hits[r]);
        if (pb.status[r] == 0xff) continue;
        printf("bounds %u", r);
        for (u32 i = 0; i < 2 * (b.len[r] + 1u); ++i) printf(" %d", pb.bounds[pb.bound_start[r] + i]);
        printf("\n");
    }
    printf("queue %u", queue_count);
    for (u32 k = 0; k < queue_count; ++k) printf(" %u", queue[k]);
    printf("\ncounts %u %u\noverflow %u\n", pb.list_counts[1], pb.list_counts[2], pb.counters.at()[CNT_OVERFLOW]);
    return 0;
}

int main(int argc, char **argv)
{
    bool proof = argc == 5 && !strcmp(argv[3], "proof");
    bool rung = argc == 8 && !strcmp(argv[3], "rung");
    bool tree = argc == 8 && !strcmp(argv[3], "tree");
    bool last = argc == 9 && !strcmp(argv[3], "last");
    if (!proof && !rung && !tree && !last) return 2;
    BwtFile bwt = load_bwt(argv[1]);
    if (last) return last_pass(bwt, argv);
    Batch b = read_batch(argv[2]);
    Penalties p = {1, 1, 1, 1 << 30};
    if (!proof) p = {atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
    Outcome out;
    out.bound_lookups = bounds_pass(bwt, b, p);
    u32 capacity = 1 << 12;
    u32 most_extensions = proof ? (u32)strtoul(argv[4], nullptr, 10) : ~0u;
    // Buffers that run out are doubled and the searches run again.
    while (!search(bwt, b, p, most_extensions, proof, tree, capacity, out)) capacity *= 2;
    if (tree) {
        trees(b, p, out);
        return 0;
    }
    for (u32 r = 0; r < b.n(); ++r) {
        if (out.extensions[r] == ~0u) printf("skip %u\n", r);
        else if (proof) printf("proof %u %d %d\n", r, out.any[r], out.extensions[r] >= most_extensions);
    }
    if (rung)
        for (const Found &f : out.found) print_found(b, p, out, f);
    printf("lookups %llu %llu\n", out.bound_lookups, out.round_lookups);
    return 0;
}
