// dcs_tile_atoms COUNT DENSITY OUT.xyzq MOLECULE.pqr...: copies of the molecules (in turn), each
// centred in a cell of a cubic lattice sized for DENSITY atoms/A^3 overall, until at least COUNT
// atoms, written as `x y z q` text: the tiled systems of bench/msm_scale_bench.py (the same
// tiling as tests/cuda/msm's BenchTiledMolecules). A tool rather than Python: 10^8 lines need
// compiled formatting (std::to_chars), and the GPU machines have no numpy.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Atom = std::array<double, 4>;  // x, y, z, q

/// x y z q of every ATOM/HETATM record (whitespace PQR: the last five fields are x y z q r).
std::vector<Atom> read_pqr(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    std::exit(2);
  }
  std::vector<Atom> atoms;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ATOM", 0) != 0 && line.rfind("HETATM", 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.size() < 6) continue;
    const std::size_t n = words.size();
    atoms.push_back({std::stod(words[n - 5]), std::stod(words[n - 4]), std::stod(words[n - 3]),
                     std::stod(words[n - 2])});
  }
  return atoms;
}

char* put(char* at, char* end, double value, int decimals) {
  return std::to_chars(at, end, value, std::chars_format::fixed, decimals).ptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: dcs_tile_atoms COUNT DENSITY OUT.xyzq MOLECULE.pqr...\n");
    return 2;
  }
  const auto count = static_cast<std::size_t>(std::strtod(argv[1], nullptr));
  const double density = std::strtod(argv[2], nullptr);
  std::vector<std::vector<Atom>> pieces;
  std::vector<Atom> centre;
  std::size_t mean = 0;
  for (int a = 4; a < argc; ++a) {
    pieces.push_back(read_pqr(argv[a]));
    if (pieces.back().empty()) {
      std::fprintf(stderr, "%s: no atoms\n", argv[a]);
      return 2;
    }
    Atom lo = pieces.back()[0], hi = lo;
    for (const Atom& atom : pieces.back())
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], atom[d]);
        hi[d] = std::max(hi[d], atom[d]);
      }
    centre.push_back({0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2]), 0});
    mean += pieces.back().size();
  }
  mean /= pieces.size();
  const double cell = std::cbrt(static_cast<double>(mean) / density);
  const auto side = static_cast<long>(
      std::ceil(std::cbrt(static_cast<double>(count) / static_cast<double>(mean))));
  std::FILE* out = std::fopen(argv[3], "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "%s: cannot create\n", argv[3]);
    return 1;
  }
  std::vector<char> buffer(std::size_t{64} << 20);
  std::size_t used = 0, written = 0;
  for (long k = 0, copy = 0; k < side && written < count; ++k)
    for (long j = 0; j < side && written < count; ++j)
      for (long i = 0; i < side && written < count; ++i, ++copy) {
        const std::size_t m = static_cast<std::size_t>(copy) % pieces.size();
        const double shift[3] = {static_cast<double>(i) * cell - centre[m][0],
                                 static_cast<double>(j) * cell - centre[m][1],
                                 static_cast<double>(k) * cell - centre[m][2]};
        for (const Atom& atom : pieces[m]) {
          if (buffer.size() - used < 128) {
            if (std::fwrite(buffer.data(), 1, used, out) != used) return 1;
            used = 0;
          }
          char* at = buffer.data() + used;
          char* const end = buffer.data() + buffer.size();
          for (int d = 0; d < 3; ++d) {
            at = put(at, end, atom[d] + shift[d], 3);
            *at++ = ' ';
          }
          at = put(at, end, atom[3], 4);
          *at++ = '\n';
          used = static_cast<std::size_t>(at - buffer.data());
          ++written;
        }
      }
  if (std::fwrite(buffer.data(), 1, used, out) != used || std::fclose(out) != 0) {
    std::fprintf(stderr, "%s: write failed\n", argv[3]);
    return 1;
  }
  std::printf("%zu atoms, cell %.3f A, %ld per axis\n", written, cell, side);
  return 0;
}
