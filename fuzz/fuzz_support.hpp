// Shared by the libFuzzer targets in fuzz/: the rule that decides what a finding is, a logger
// that formats every message but prints none, invariants of what the readers return, and a
// scratch directory for the targets that must go through a file name (gzip, plain files).
//
// A finding is anything but a clean outcome: dcs::InputError and dcs::UsageError are the
// expected answers to bad input; any other exception (std::out_of_range from a substr,
// std::bad_alloc, a dcs::Error of another kind), a result that breaks the documented
// invariants, a crash, a leak or undefined behaviour (ASan/UBSan) is reported and aborts.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/limits.hpp"
#include "dcs/physics.hpp"
#include "dcs/types.hpp"

namespace dcs::fuzz {

/// The line reader's block (LineSource::kBlockSize in io/src/line_source.hpp).
inline constexpr std::size_t kReaderBlock = std::size_t{1} << 17;

/// Registers the "dcs" logger before dcs::log() first runs: every message is still formatted
/// (the level is trace), none is printed.
inline void quiet_logging() {
  if (spdlog::get("dcs")) return;
  auto logger =
      std::make_shared<spdlog::logger>("dcs", std::make_shared<spdlog::sinks::null_sink_mt>());
  logger->set_level(spdlog::level::trace);
  spdlog::register_logger(logger);
}

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\n==FINDING== %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void require(bool condition, const std::string& what) {
  if (!condition) finding(what);
}

/// What a call under test ended with.
enum class Outcome { kOk, kInputError, kUsageError };

/// One reading of a text by a stream parser (parse_pqr, parse_xyzq).
struct TextReading {
  Outcome outcome = Outcome::kOk;
  std::string message;
  System system;
};

/// Runs `body`; InputError and UsageError are outcomes, every other exception a finding.
/// `message` receives what() of an expected error.
template <class Body>
Outcome run_expecting(const char* what, Body&& body, std::string* message = nullptr) {
  try {
    body();
    return Outcome::kOk;
  } catch (const InputError& error) {
    if (message) *message = error.what();
    return Outcome::kInputError;
  } catch (const UsageError& error) {
    if (message) *message = error.what();
    return Outcome::kUsageError;
  } catch (const std::exception& error) {
    finding(std::string(what) + ": unexpected exception " + typeid(error).name() + ": " +
            error.what());
  } catch (...) {
    finding(std::string(what) + ": unexpected exception of a non-std type");
  }
}

/// What io/pqr.hpp promises of every System a reader returns.
inline void check_system(const System& system, const char* what) {
  const std::string where = std::string(what) + ": ";
  require(!system.atoms.empty(), where + "a System without atoms was returned");
  require(system.model_count >= 1, where + "model_count 0");
  for (const Atom& atom : system.atoms) {
    for (double c : atom.position)
      require(std::isfinite(c) && std::fabs(c) <= limits::kMaxCoordinate,
              where + "coordinate outside the limits accepted: " + std::to_string(c));
    require(std::isfinite(atom.charge) && std::fabs(atom.charge) <= limits::kMaxCharge,
            where + "charge outside the limits accepted: " + std::to_string(atom.charge));
    require(std::isfinite(atom.radius) && atom.radius >= 0.0 && atom.radius <= limits::kMaxRadius,
            where + "radius outside the limits accepted: " + std::to_string(atom.radius));
  }
}

/// Atoms equal field by field (two readings of the same text).
inline bool same_atoms(const System& a, const System& b) {
  if (a.atoms.size() != b.atoms.size()) return false;
  for (std::size_t i = 0; i < a.atoms.size(); ++i) {
    const Atom& x = a.atoms[i];
    const Atom& y = b.atoms[i];
    if (x.position != y.position || x.charge != y.charge || x.radius != y.radius ||
        x.serial != y.serial || x.name != y.name || x.res_name != y.res_name ||
        x.chain != y.chain || x.res_seq != y.res_seq || x.hetatm != y.hetatm)
      return false;
  }
  return true;
}

/// What make_grid() promises of a grid it returns (dcs/grid.hpp, dcs/limits.hpp).
inline void check_grid(const GridSpec& grid, const char* what) {
  const std::string where = std::string(what) + ": ";
  for (std::size_t a = 0; a < 3; ++a) {
    require(grid.counts[a] >= 1 && grid.counts[a] <= limits::kMaxCountPerAxis,
            where + "grid count outside the limits: " + std::to_string(grid.counts[a]));
    require(std::isfinite(grid.spacing[a]) && grid.spacing[a] >= limits::kMinSpacing &&
                grid.spacing[a] <= limits::kMaxSpacing,
            where + "grid spacing outside the limits: " + std::to_string(grid.spacing[a]));
    const double last = grid.origin[a] + static_cast<double>(grid.counts[a] - 1) * grid.spacing[a];
    require(std::isfinite(grid.origin[a]) &&
                std::fabs(grid.origin[a]) <= limits::kMaxGridCoordinate &&
                std::fabs(last) <= limits::kMaxGridCoordinate,
            where + "grid beyond the coordinate limit: origin " + std::to_string(grid.origin[a]));
  }
  (void)format_bytes(map_bytes(grid));
  (void)grid.describe();
}

/// What the pipeline does with atoms right after reading them (run.cpp): the potential bound
/// and the default grid around them. Both may refuse (UsageError); neither may do more.
inline void use_atoms(const System& system, const char* what) {
  run_expecting(what, [&] { check_potential_bound(system, Physics{}); });
  GridRequest request;
  request.counts = {{129, 129, 129}};
  run_expecting(what, [&] { check_grid(make_grid(system, request), what); });
  request.counts.reset();
  request.spacing = 0.5;
  request.padding = 0.0;
  run_expecting(what, [&] { check_grid(make_grid(system, request), what); });
}

/// `text` through a stream parser: `parse(std::istream&)` returns a System. UsageError is a
/// finding; InputError an outcome.
template <class Parse>
TextReading read_text(const char* what, const std::string& text, Parse&& parse) {
  TextReading r;
  r.outcome = run_expecting(
      what,
      [&] {
        std::istringstream in(text);
        r.system = parse(in);
      },
      &r.message);
  require(r.outcome != Outcome::kUsageError, std::string(what) + " threw UsageError: " + r.message);
  return r;
}

/// `text` with every '\n' replaced by `ending`.
inline std::string with_line_endings(const std::string& text, const std::string& ending) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    if (c == '\n') out += ending;
    else out += c;
  }
  return out;
}

/// Comment lines of `bytes` bytes in all (each under 100 bytes, the last ending in '\n'), each
/// starting with `prefix` and followed by dots only: moves the reader's block boundary without
/// changing what is read. bytes >= prefix.size() + 1.
inline std::string filler_lines(std::size_t bytes, const std::string& prefix) {
  std::string out;
  const std::string line = prefix + std::string(79 - prefix.size(), '.') + "\n";  // 80 bytes
  while (bytes - out.size() > 2 * line.size()) out += line;
  out += prefix;
  out.append(bytes - out.size() - 1, '.');
  return out + "\n";
}

/// What every stream reading of text promises (`read` parses a text into a TextReading):
/// - LF, CRLF and CR-only line endings read alike (same atoms, same message);
/// - one input in four (by its last byte; the filler costs more than the rest together): the
///   128 KiB block boundary moved inside the input by filler lines changes nothing;
/// - one input in four (by its first byte): a line longer than io::kMaxLineBytes after the text
///   is refused (at that line, or earlier for an earlier error).
template <class Read>
void check_text_readings(const std::uint8_t* data, std::size_t size, const TextReading& first,
                         const std::string& comment, std::size_t max_line, Read&& read) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('\r') == std::string::npos && text.find('\n') != std::string::npos) {
    for (const char* ending : {"\r\n", "\r"}) {
      const TextReading other = read(with_line_endings(text, ending));
      require(other.outcome == first.outcome && other.message == first.message,
              std::string("line endings ") + (ending[1] ? "CRLF" : "CR") +
                  " change the outcome: '" + first.message + "' vs '" + other.message + "'");
      if (first.outcome == Outcome::kOk)
        require(same_atoms(first.system, other.system), "CRLF/CR line endings change the atoms");
    }
  }
  if (size > 0 && size + 16 < kReaderBlock && (data[size - 1] & 3) == 0) {
    const std::size_t k = (static_cast<std::size_t>(data[0]) * 131 + size) % (size + 1);
    const TextReading other = read(filler_lines(kReaderBlock - k, comment) + text);
    require((other.outcome == Outcome::kOk) == (first.outcome == Outcome::kOk),
            "a block boundary inside the input changes the outcome: '" + first.message + "' vs '" +
                other.message + "'");
    if (first.outcome == Outcome::kOk)
      require(same_atoms(first.system, other.system),
              "a block boundary inside the input changes the atoms");
  }
  if (size > 0 && (data[0] & 0x30) == 0x30) {
    const char fill = data[0] == '\n' || data[0] == '\r' ? ' ' : static_cast<char>(data[0]);
    const TextReading other = read(text + "\n" + comment + std::string(max_line, fill) + "\n");
    require(other.outcome == Outcome::kInputError,
            "a line longer than kMaxLineBytes was accepted: '" + other.message + "'");
    if (first.outcome == Outcome::kOk)
      require(other.message.find("line longer than") != std::string::npos,
              "a long line after a good text is refused for another reason: " + other.message);
  }
}

/// Every target includes this header from its one source file: the shared libFuzzer set-up.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  quiet_logging();
  return 0;
}

/// A per-process directory for the files a target writes: $DCS_FUZZ_SCRATCH/<pid> (what
/// scripts/run-fuzzers.sh sets and removes), else /dev/shm/dcs-fuzz-<pid> (RAM-backed), removed
/// at a normal exit; a crash, a timeout or libFuzzer's own exit after -max_total_time leave it.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    namespace fs = std::filesystem;
    const char* given = std::getenv("DCS_FUZZ_SCRATCH");
    const fs::path base = given != nullptr && *given != '\0' ? fs::path(given)
                          : fs::is_directory("/dev/shm")     ? fs::path("/dev/shm")
                                                             : fs::temp_directory_path();
    fs::path made = base / ("dcs-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(made);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(scratch_dir(), ignored);
    });
    return made;
  }();
  return dir;
}

}  // namespace dcs::fuzz
