#include "xtc_check.hpp"

#include <array>
#include <cstddef>
#include <fstream>
#include <string>

#include "dcs/error.hpp"

namespace dcs::io::detail {
namespace {

// xdrfile's table (chemfiles XDRFile.cpp MAGICINTS): sizes of the "small" deltas.
constexpr std::array<std::uint32_t, 73> kMagicInts = {
    0,        0,        0,       0,       0,       0,       0,       0,       0,       8,
    10,       12,       16,      20,      25,      32,      40,      50,      64,      80,
    101,      128,      161,     203,     256,     322,     406,     512,     645,     812,
    1024,     1290,     1625,    2048,    2580,    3250,    4096,    5060,    6501,    8192,
    10321,    13003,    16384,   20642,   26007,   32768,   41285,   52015,   65536,   82570,
    104031,   131072,   165140,  208063,  262144,  330280,  416127,  524287,  660561,  832255,
    1048576,  1321122,  1664510, 2097152, 2642245, 3329021, 4194304, 5284491, 6658042, 8388607,
    10568983, 13316085, 16777216};
constexpr std::uint32_t kFirstIdx = 9;
constexpr std::uint32_t kLastIdx = static_cast<std::uint32_t>(kMagicInts.size());

struct Corrupt {
  const char* what;
};

/// xdrfile's bit reader (decodebits), each byte read bounded by the compressed size.
class Bits {
 public:
  Bits(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}
  std::uint32_t read(std::uint32_t bits) {
    const std::uint32_t mask = bits >= 32 ? 0xffffffffu : (std::uint32_t{1} << bits) - 1;
    std::uint32_t num = 0;
    while (bits >= 8) {
      last_byte_ = (last_byte_ << 8) | next();
      num |= (last_byte_ >> last_bits_) << (bits - 8);
      bits -= 8;
    }
    if (bits > 0) {
      if (last_bits_ < bits) {
        last_bits_ += 8;
        last_byte_ = (last_byte_ << 8) | next();
      }
      last_bits_ -= bits;
      num |= (last_byte_ >> last_bits_) & mask;
    }
    last_byte_ &= 0xff;
    return num & mask;
  }
  /// decodeints: `bits` bits in bytes of 8 and a rest (the values are not needed here).
  void skip_ints(std::uint32_t bits) {
    while (bits > 8) {
      read(8);
      bits -= 8;
    }
    if (bits > 0) read(bits);
  }

 private:
  std::uint32_t next() {
    if (count_ >= size_) throw Corrupt{"they end before the last atom"};
    return data_[count_++];
  }
  const unsigned char* data_;
  std::size_t size_;
  std::size_t count_ = 0;
  std::uint32_t last_bits_ = 0;
  std::uint32_t last_byte_ = 0;
};

std::uint32_t size_of_int(std::uint64_t size) {
  std::uint32_t bits = 0;
  for (std::uint64_t num = 1; size >= num && bits < 32; num <<= 1) ++bits;
  return bits;
}

/// sizeofints for three sizes: bits of their product, in xdrfile's 32-bit arithmetic.
std::uint32_t size_of_ints(const std::array<std::uint64_t, 3>& sizes) {
  std::array<std::uint32_t, 32> bytes{};
  bytes[0] = 1;
  std::size_t num_bytes = 1;
  for (std::uint64_t size : sizes) {
    std::uint32_t tmp = 0;
    std::size_t i = 0;
    for (; i < num_bytes; ++i) {
      tmp = bytes[i] * static_cast<std::uint32_t>(size) + tmp;
      bytes[i] = tmp & 0xff;
      tmp >>= 8;
    }
    while (tmp != 0) {
      if (i >= bytes.size()) throw Corrupt{"sizes too large"};
      bytes[i++] = tmp & 0xff;
      tmp >>= 8;
    }
    num_bytes = i;
  }
  std::uint32_t num = 1;
  std::uint32_t bits = 0;
  --num_bytes;
  while (bytes[num_bytes] >= num) {
    ++bits;
    num *= 2;
  }
  return bits + static_cast<std::uint32_t>(num_bytes) * 8;
}

std::int64_t be32(const unsigned char* p) {
  return static_cast<std::int32_t>((std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                                   (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]});
}

/// xdrfile's xtc3dfcoord decoding loop (chemfiles read_gmx_compressed_floats), counting only.
/// `frame` starts at the precision (frame offset + 56).
void walk(const unsigned char* p, std::size_t size, std::size_t atoms) {
  if (size < 40) throw Corrupt{"the frame is shorter than its header"};
  std::array<std::int64_t, 3> minint{be32(p + 4), be32(p + 8), be32(p + 12)};
  std::array<std::int64_t, 3> maxint{be32(p + 16), be32(p + 20), be32(p + 24)};
  std::uint32_t small_idx = static_cast<std::uint32_t>(be32(p + 28));
  const auto count = static_cast<std::uint64_t>(static_cast<std::uint32_t>(be32(p + 32)));
  if (small_idx < kFirstIdx || small_idx >= kLastIdx) throw Corrupt{"bad small-integer index"};
  if (count > size - 36) throw Corrupt{"byte count beyond the frame"};
  std::array<std::uint64_t, 3> sizes{};
  std::array<std::uint32_t, 3> bit_sizes{};
  bool large = false;
  for (std::size_t a = 0; a < 3; ++a) {
    // chemfiles computes (uint32)(max - min) + 1; a negative or full-range span makes a size
    // of zero (a division by zero in its decodeints).
    const std::int64_t span = maxint[a] - minint[a];
    if (span < 0 || span >= 0xffffffffLL) throw Corrupt{"bad coordinate range"};
    sizes[a] = static_cast<std::uint64_t>(span) + 1;
    if (sizes[a] > 0xffffff) large = true;
  }
  std::uint32_t bit_size = 0;
  if (large) {
    for (std::size_t a = 0; a < 3; ++a) bit_sizes[a] = size_of_int(sizes[a]);
  } else {
    bit_size = size_of_ints(sizes);
  }
  Bits bits(p + 36, static_cast<std::size_t>(count));
  int run = 0;
  for (std::size_t atom = 0; atom < atoms; ++atom) {
    if (large) {
      for (std::size_t a = 0; a < 3; ++a) bits.read(bit_sizes[a]);
    } else {
      bits.skip_ints(bit_size);
    }
    int is_smaller = 0;
    if (bits.read(1) != 0) {
      run = static_cast<int>(bits.read(5));
      is_smaller = run % 3;
      run -= is_smaller;
      --is_smaller;
    }
    if (run > 0) {
      // chemfiles refuses only atom * 3 + run > atoms * 3, yet writes run / 3 atoms after
      // this one: one atom past its buffers.
      if ((atom + 1) * 3 + static_cast<std::size_t>(run) > atoms * 3)
        throw Corrupt{"a run past the last atom"};
      for (int k = 0; k < run; k += 3) {
        bits.skip_ints(small_idx);
        ++atom;
      }
    }
    if (is_smaller < 0) {
      --small_idx;
    } else if (is_smaller > 0) {
      ++small_idx;
    }
    if (small_idx < kFirstIdx || small_idx >= kLastIdx) throw Corrupt{"bad small-integer index"};
  }
}

}  // namespace

void check_xtc_frame(const std::string& path, const XtcFrames& frames, std::size_t frame,
                     std::size_t atoms) {
  if (atoms <= 9) return;  // stored uncompressed
  if (frame + 1 >= frames.offsets.size())
    throw InputError(path, 0,
                     "frame " + std::to_string(frame) + ": beyond the " +
                         std::to_string(frames.offsets.size() - 1) + " frames found in the file");
  const std::uint64_t begin = frames.offsets[frame] + 56;
  const std::uint64_t end = frames.offsets[frame + 1];
  std::vector<unsigned char> bytes(end > begin ? static_cast<std::size_t>(end - begin) : 0);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(begin));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string where = "frame " + std::to_string(frame) + ": ";
  if (!in) throw InputError(path, 0, where + "cannot read its bytes");
  try {
    walk(bytes.data(), bytes.size(), atoms);
  } catch (const Corrupt& corrupt) {
    throw InputError(path, 0, where + "corrupt compressed coordinates (" + corrupt.what + ")");
  }
}

}  // namespace dcs::io::detail
