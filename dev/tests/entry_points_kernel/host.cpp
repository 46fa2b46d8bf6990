// cuda/inexact_match.cu built for the CPU with the rungs (-Drungs), so that
// dev/tests/entry_points_kernel.rs can check the -m guard's entry points the team kernel counts
// against the model's (GuardWatch in src/search/m_guard.rs), pop by pop: each pop goes through
// the kernel's own step, which calls count_entry_points where it would on the GPU.
//   host BWT CASES: CASES has a line per read, its fields apart by spaces:
//     LEN G FULL, GapOpt's 16 ints (its order), SEQ (a digit a base, 4 for N), the read's D
//     array (LEN + 1 cells packed as read_widths packs them), SEEDED (0 or 1) and then the
//     seed's D array (seed_len + 1 cells), N_POPS, and each pop as I K L N_MM N_GAPO N_GAPE
//     N_INS N_DEL STATE.
//   Prints a line a read: the counters' words a rung of limit G uses (rung_guard_reset).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "m_guard.cuh"
#include "inexact_match.cu"
#include "../bwt_file.h"

// step's children go nowhere: only its count is checked.
struct NoSink {
    enum { records = gap_records };
    void push(const Entry &) {}
};

static std::vector<Width> read_widths_of(std::istringstream &fields, int n)
{
    std::vector<Width> w(n);
    for (int j = 0; j < n; ++j) {
        u64 cell;
        fields >> cell;
        w[j] = unpack_width(cell);
    }
    return w;
}

static void count_read(const BwtFile &bwt, const std::string &line)
{
    std::istringstream fields(line);
    int len, g, full;
    fields >> len >> g >> full;
    int o[16];
    for (int &x : o) fields >> x;
    GapOpt opt = {o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15]};
    std::string digits;
    fields >> digits;
    std::vector<u8> seq;
    for (char c : digits) seq.push_back((u8)(c - '0'));
    std::vector<Width> width = read_widths_of(fields, len + 1);
    int seeded;
    fields >> seeded;
    std::vector<Width> seed_width = seeded ? read_widths_of(fields, opt.seed_len + 1) : std::vector<Width>(1);
    u64 lookups = 0;
    Read r = read_view(bwt.words.data(), bwt.primary, bwt.seq_len, bwt.l2, nullptr, 0, opt, len, g, seed_width.data(), seq.data(), lookups);
    std::vector<u32> guard(GUARD_INTS(len));
    Team one = {0, 1, nullptr};
    r.full = full;
    r.guard = rung_guard_reset(guard.data(), len, g, one);
    int n_pops;
    fields >> n_pops;
    for (int p = 0; p < n_pops; ++p) {
        int i, n_mm, n_gapo, n_gape, n_ins, n_del, state;
        u64 k, l;
        fields >> i >> k >> l >> n_mm >> n_gapo >> n_gape >> n_ins >> n_del >> state;
        Entry e = make_entry(r.opt, i, k, l, n_mm, n_gapo, n_gape, n_ins, n_del, state, false);
        NoSink sink;
        u64 hk, hl;
        Entry matching;
        bool has_matching;
        step(r, e, g, width.data(), sink, hk, hl, matching, has_matching);
    }
    int used = GUARD_ROWS + (2 + g + 2) * (len + 1);
    for (int j = 0; j < used; ++j) printf(j ? " %u" : "%u", guard[j]);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    BwtFile bwt = load_bwt(argv[1]);
    std::ifstream in(argv[2]);
    std::string line;
    while (std::getline(in, line)) count_read(bwt, line);
    return 0;
}
