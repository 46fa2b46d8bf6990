// cuda/m_guard.cuh built for the CPU, so that dev/tests/m_guard_kernel.rs can check its bound
// against the model's (src/search/m_guard.rs) read by read without a GPU.
//   host CASES: CASES has a line per read, its fields apart by spaces:
//     LEN FULL BOUNDED_POPS BEST_SCORE D_STAR S_MM S_GAPO S_GAPE MAX_ENTRIES NONSTOP
//     OTHER_GAP_SCORE SEQ (a digit a base, 4 for N), the (FULL + 1)(LEN + 1) mismatch counts,
//     the 2 (LEN + 1) gap chain counts, N_BWA N_D, then each D array's START N and its N cells
//     packed as read_widths packs them.
//   Prints a line a read: "none" where the bound does not apply, else the bound and whether it
//   took the further D arrays (1 or 0).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_on_cpu.h"
#include "bwt.cuh"
#include "m_guard.cuh"

// One line of CASES read into the arrays the bound takes.
struct Case {
    MGuardRead read;
    MGuardOpt opt;
    int n_bwa, n_d;
    std::vector<u8> seq;
    std::vector<u32> mm, gap;
    std::vector<std::vector<u64>> cells;
    std::vector<MGuardDArray> d;
};

static void read_numbers(std::istringstream &fields, std::vector<u32> &to, size_t n)
{
    to.resize(n);
    for (size_t j = 0; j < n; ++j) fields >> to[j];
}

static Case parse(const std::string &line)
{
    std::istringstream fields(line);
    Case c;
    int nonstop, full;
    std::string seq;
    fields >> c.read.len >> full >> c.read.bounded_pops >> c.read.best_score >> c.read.d_star;
    fields >> c.opt.s_mm >> c.opt.s_gapo >> c.opt.s_gape >> c.opt.max_entries >> nonstop;
    fields >> c.read.counts.other_gap_score >> seq;
    c.opt.full = full;
    c.opt.nonstop = nonstop != 0;
    for (char b : seq) c.seq.push_back((u8)(b - '0'));
    size_t row = c.read.len + 1, levels = full > 0 ? full + 1 : 1;
    read_numbers(fields, c.mm, levels * row);
    c.read.counts.levels = (int)levels;
    read_numbers(fields, c.gap, 2 * row);
    fields >> c.n_bwa >> c.n_d;
    c.cells.resize(c.n_d);
    c.d.resize(c.n_d);
    for (int j = 0; j < c.n_d; ++j) {
        fields >> c.d[j].start >> c.d[j].n;
        c.cells[j].resize(c.d[j].n);
        for (int x = 0; x < c.d[j].n; ++x) fields >> c.cells[j][x];
        c.d[j].cells = c.cells[j].data();
    }
    c.read.seq = c.seq.data();
    c.read.counts.mm = c.mm.data();
    c.read.counts.gap = c.gap.data();
    return c;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    std::ifstream in(argv[1]);
    std::string line;
    while (std::getline(in, line)) {
        Case c = parse(line);
        std::vector<u64> floor(c.read.len + 2), born(c.read.len + 2), alive(c.read.len + 2), caps(c.read.len + 2);
        MGuardScratch s = {floor.data(), born.data(), alive.data(), caps.data()};
        MGuardTeam one = {0, 1};
        u64 entries;
        bool further;
        if (m_guard_bound(c.read, c.d.data(), c.n_bwa, c.n_d, c.opt, s, one, entries, further))
            printf("%llu %d\n", entries, further ? 1 : 0);
        else
            printf("none\n");
    }
    return 0;
}
