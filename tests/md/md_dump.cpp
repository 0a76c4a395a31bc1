// md_dump: reads an MD system with dcs's readers (io::read_topology, io::TrajectoryReader) and
// writes what they returned, for md_readers_check.py to compare with MDAnalysis:
//   OUTDIR/atoms.json      {"format", "atoms": [{"name", "res_name", "res_seq", "segment",
//                          "chain", "serial", "charge", "position"}], "frames", "times"}
//   OUTDIR/positions.f64   every frame's positions, frames × atoms × 3 float64, little-endian
// Usage: md_dump OUTDIR TOPOLOGY [TRAJECTORY...]
#include <bit>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/topology.hpp"
#include "dcs/io/trajectory.hpp"

namespace {

std::string json_string(const std::string& text) {
  std::ostringstream out;
  out << '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') out << '\\' << c;
    else if (u < 0x20 || u >= 0x7f)
      out << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int{u} << std::dec;
    else out << c;
  }
  out << '"';
  return out.str();
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  std::ostringstream out;
  out << std::setprecision(17) << value;
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(std::endian::native == std::endian::little, "positions.f64 is little-endian");
  if (argc < 3) {
    std::fprintf(stderr, "usage: md_dump OUTDIR TOPOLOGY [TRAJECTORY...]\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const dcs::System system = dcs::io::read_topology(argv[2]);
    std::vector<double> times;
    std::int64_t frames = 0;
    if (argc > 3) {
      dcs::io::TrajectoryReader reader(std::vector<std::string>(argv + 3, argv + argc),
                                       system.size(), argv[2]);
      std::ofstream positions(dir / "positions.f64", std::ios::binary);
      dcs::io::TrajectoryFrame frame;
      for (std::int64_t i = 0; i < reader.frames(); ++i) {
        reader.read(i, frame);
        if (frame.index != i) throw dcs::InternalError("frame index");
        positions.write(reinterpret_cast<const char*>(frame.positions.data()),
                        static_cast<std::streamsize>(frame.positions.size() * sizeof(dcs::Vec3)));
        times.push_back(frame.time_ps);
      }
      frames = reader.frames();
    }
    std::ofstream out(dir / "atoms.json");
    out << "{\"format\": " << json_string(system.source_format)
        << ", \"sha256\": " << json_string(system.source_sha256) << ", \"frames\": " << frames
        << ", \"times\": [";
    for (std::size_t i = 0; i < times.size(); ++i) out << (i ? ", " : "") << json_number(times[i]);
    out << "],\n\"atoms\": [\n";
    for (std::size_t i = 0; i < system.atoms.size(); ++i) {
      const dcs::Atom& a = system.atoms[i];
      out << (i ? ",\n" : "") << "{\"name\": " << json_string(a.name)
          << ", \"res_name\": " << json_string(a.res_name) << ", \"res_seq\": " << a.res_seq
          << ", \"segment\": " << json_string(a.segment) << ", \"chain\": " << json_string(a.chain)
          << ", \"serial\": " << a.serial << ", \"charge\": " << json_number(a.charge)
          << ", \"position\": [" << json_number(a.position[0]) << ", " << json_number(a.position[1])
          << ", " << json_number(a.position[2]) << "]}";
    }
    out << "]}\n";
    if (!out) throw dcs::IoError("cannot write " + (dir / "atoms.json").string());
  } catch (const dcs::Error& error) {
    std::fprintf(stderr, "md_dump: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  }
  return 0;
}
