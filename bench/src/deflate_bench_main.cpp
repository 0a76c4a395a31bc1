// dcs_deflate_bench: what each deflate level costs on a real map, per core. Reads /potential of
// a dcs map (any compression), cuts it into the store's chunks (16 x 64 x 64 floats; a chunk
// at the edge is zero-padded as the store pads it), byte-shuffles each (HDF5's shuffle filter)
// and compresses them one after the other with libdeflate on one thread, as the store does on
// each of its threads. Prints MB/s of map bytes per core and the compression ratio per level.
// Usage: dcs_deflate_bench map.h5 [levels...] (default levels: 1 4 6 9)
#include <hdf5.h>
#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr hsize_t kDepth = 16, kEdge = 64;

std::vector<float> read_map(const char* path, std::array<hsize_t, 3>& dims) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t set = file < 0 ? -1 : H5Dopen2(file, "potential", H5P_DEFAULT);
  if (set < 0) {
    std::fprintf(stderr, "cannot read /potential of %s\n", path);
    std::exit(1);
  }
  const hid_t space = H5Dget_space(set);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<float> values(dims[0] * dims[1] * dims[2]);
  H5Dread(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dcs_deflate_bench map.h5 [levels...]\n");
    return 2;
  }
  std::array<hsize_t, 3> dims{};
  const std::vector<float> map = read_map(argv[1], dims);
  // The shuffled chunks, made once: the timing is of deflate alone.
  std::vector<std::vector<std::uint8_t>> chunks;
  const std::size_t floats = kDepth * kEdge * kEdge;
  for (hsize_t z0 = 0; z0 < dims[0]; z0 += kDepth)
    for (hsize_t y0 = 0; y0 < dims[1]; y0 += kEdge)
      for (hsize_t x0 = 0; x0 < dims[2]; x0 += kEdge) {
        std::vector<float> chunk(floats, 0.0f);
        for (hsize_t z = z0; z < std::min(dims[0], z0 + kDepth); ++z)
          for (hsize_t y = y0; y < std::min(dims[1], y0 + kEdge); ++y)
            for (hsize_t x = x0; x < std::min(dims[2], x0 + kEdge); ++x)
              chunk[((z - z0) * kEdge + (y - y0)) * kEdge + (x - x0)] =
                  map[(z * dims[1] + y) * dims[2] + x];
        std::vector<std::uint8_t> shuffled(floats * 4);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(chunk.data());
        for (std::size_t e = 0; e < floats; ++e)
          for (std::size_t b = 0; b < 4; ++b) shuffled[b * floats + e] = bytes[4 * e + b];
        chunks.push_back(std::move(shuffled));
      }
  const double megabytes = static_cast<double>(chunks.size() * floats * 4) / 1e6;
  std::printf("%s: %llu x %llu x %llu, %zu chunks of 16x64x64, %.1f MB\n", argv[1],
              static_cast<unsigned long long>(dims[0]), static_cast<unsigned long long>(dims[1]),
              static_cast<unsigned long long>(dims[2]), chunks.size(), megabytes);
  std::vector<int> levels;
  for (int i = 2; i < argc; ++i) levels.push_back(std::atoi(argv[i]));
  if (levels.empty()) levels = {1, 4, 6, 9};
  for (const int level : levels) {
    libdeflate_compressor* compressor = libdeflate_alloc_compressor(level);
    std::vector<std::uint8_t> out(libdeflate_zlib_compress_bound(compressor, floats * 4));
    double best = 1e30;
    std::size_t total = 0;
    for (int repeat = 0; repeat < 2; ++repeat) {
      total = 0;
      const auto start = std::chrono::steady_clock::now();
      for (const auto& chunk : chunks)
        total += libdeflate_zlib_compress(compressor, chunk.data(), chunk.size(), out.data(),
                                          out.size());
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    libdeflate_free_compressor(compressor);
    std::printf("level %d  %8.1f MB/s per core  ratio %.3f (%.1f MB)\n", level, megabytes / best,
                megabytes * 1e6 / static_cast<double>(total), static_cast<double>(total) / 1e6);
  }
  return 0;
}
