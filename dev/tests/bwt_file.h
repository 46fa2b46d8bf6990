// bwa's .bwt file as the kernels take it: its header (primary, the four counts of L2[1..4],
// seq_len) and the interleaved words after it.
#include <fstream>
#include <iterator>
#include <vector>

struct BwtFile {
    u64 primary, seq_len;
    u64 l2[5];
    std::vector<u32> words;
};

static BwtFile load_bwt(const char *path)
{
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    u64 header[5];
    std::copy(bytes.begin(), bytes.begin() + 40, (char *)header);
    BwtFile b = {header[0], header[4], {0, header[1], header[2], header[3], header[4]}, {}};
    b.words.resize((bytes.size() - 40) / 4);
    std::copy(bytes.begin() + 40, bytes.end(), (char *)b.words.data());
    return b;
}
