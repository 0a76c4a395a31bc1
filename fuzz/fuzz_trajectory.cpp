// libFuzzer target: io::TrajectoryReader (chemfiles behind our header checks) on files made
// from the input. Layout: byte 0 picks the extension (.dcd, .xtc, .trr, .nc by its low two
// bits; bit 2: the file is given twice, read as one trajectory), bytes 1-2 the topology's atom
// count - 1 (little-endian), the rest is the file. Every frame is read in order, then the first
// again. InputError and UsageError from the constructor are answers; after a successful
// construction, it checks what io/trajectory.hpp promises: frames() >= 1 (twice the file's
// count for a doubled file), each frame has atoms() positions, finite and within
// dcs::limits::kMaxCoordinate, and its index; reading frame 0 again gives the same positions
// (chemfiles' XTC decoder, fed a frame whose compressed data end early, used the bytes left
// from the previous frame: io/src/xtc_check.cpp refuses such frames); an index >= frames() is a
// UsageError.
//
// chemfiles itself is not instrumented (built by scripts/setup-chemfiles.sh); ASan still sees
// what it allocates, so a corrupt size that reaches it shows as an out-of-memory finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "dcs/io/trajectory.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::Outcome;
using dcs::fuzz::require;
using dcs::fuzz::run_expecting;

constexpr const char* kExtensions[] = {".dcd", ".xtc", ".trr", ".nc"};

void check_frame(const dcs::io::TrajectoryFrame& frame, std::int64_t index, std::size_t atoms) {
  require(frame.index == index,
          "frame index " + std::to_string(frame.index) + " for " + std::to_string(index));
  require(frame.positions.size() == atoms, "frame with another atom count");
  for (const dcs::Vec3& p : frame.positions)
    for (double c : p)
      require(std::isfinite(c) && std::fabs(c) <= dcs::limits::kMaxCoordinate,
              "coordinate outside the limits: " + std::to_string(c));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::string path =
      (dcs::fuzz::scratch_dir() / (std::string("input") + kExtensions[data[0] & 3])).string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 3), static_cast<std::streamsize>(size - 3));
  }
  const bool twice = (data[0] & 4) != 0;
  const std::size_t atoms = std::size_t{1} + data[1] + (std::size_t{data[2]} << 8);
  std::vector<std::string> paths{path};
  if (twice) paths.push_back(path);

  std::string message;
  std::optional<dcs::io::TrajectoryReader> reader;
  const Outcome opened = run_expecting(
      "TrajectoryReader", [&] { reader.emplace(paths, atoms, "fuzz.psf"); }, &message);
  if (opened != Outcome::kOk) return 0;
  require(reader->frames() >= 1, "a trajectory of no frames was accepted");
  require(!twice || reader->frames() % 2 == 0, "a doubled file with an odd frame count");
  require(reader->atoms() == atoms, "atoms() differs from the topology's count");

  dcs::io::TrajectoryFrame frame, first;
  bool read_all = true;
  for (std::int64_t i = 0; i < reader->frames() && read_all; ++i) {
    const Outcome o = run_expecting(
        "TrajectoryReader::read", [&] { reader->read(i, frame); }, &message);
    require(o != Outcome::kUsageError, "read of an existing frame threw UsageError: " + message);
    if (o != Outcome::kOk) {
      require(message.find("frame ") != std::string::npos,
              "read error without a frame: " + message);
      read_all = false;
      break;
    }
    check_frame(frame, i, atoms);
    if (i == 0) first = frame;
  }
  if (read_all) {
    reader->read(0, frame);
    require(frame.positions == first.positions, "frame 0 read again differs");
  }
  const Outcome beyond = run_expecting(
      "read(frames())", [&] { reader->read(reader->frames(), frame); }, &message);
  require(beyond == Outcome::kUsageError, "an index beyond the last frame was not a UsageError");
  return 0;
}
