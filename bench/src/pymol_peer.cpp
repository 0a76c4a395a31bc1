#include "pymol_peer.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace dcs::bench {
namespace {

// Loads the PQR (charges into partial_charge), sets the occupancy that map_new multiplies the
// charge by (a PQR has none) to 1, times map_new in process CPU time, and reads the map's point
// counts back from the CCP4 file PyMOL writes (no numpy needed). Prints one line of key=value.
constexpr const char* kScript = R"PY(
import os, struct, sys, time
import pymol
from pymol import cmd
pymol.finish_launching(['pymol', '-qc'])
path, spacing, buffer, reps, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
cmd.load(path, 'mol')
cmd.alter('all', 'q=1.0')
atoms = cmd.count_atoms('mol')
best = None
for rep in range(reps):
    cmd.delete('m')
    t0 = time.process_time()
    cmd.map_new('m', 'coulomb', spacing, 'mol', buffer)
    seconds = time.process_time() - t0
    best = seconds if best is None else min(best, seconds)
cmd.save(out, 'm')
with open(out, 'rb') as f:
    nx, ny, nz = struct.unpack('<3i', f.read(12))
print('dcs-pymol version=%s atoms=%d points=%d cpu_seconds=%.6f' % (cmd.get_version()[0], atoms, nx * ny * nz, best))
)PY";

/// Runs `command` through the shell; returns its exit status and stdout+stderr.
int run(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
    output += buffer.data();
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

PymolMeasurement measure_pymol(const System& system, double spacing, double buffer,
                               int repetitions) {
  PymolMeasurement m;
  std::vector<std::string> pythons;
  if (const char* env = std::getenv("DCS_PYMOL_PYTHON"); env != nullptr && *env != '\0')
    pythons.emplace_back(env);
  pythons.emplace_back("/usr/bin/python3");
  pythons.emplace_back("python3");
  std::string output;
  for (const std::string& python : pythons) {
    if (run(shell_quote(python) + " -c 'import pymol'", output) == 0) {
      m.python = python;
      break;
    }
  }
  if (m.python.empty()) {
    m.why =
        "PyMOL not importable by $DCS_PYMOL_PYTHON, /usr/bin/python3 or python3 (Debian: "
        "python3-pymol; elsewhere a PyMOL wheel and DCS_PYMOL_PYTHON)";
    return m;
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("dcs-bench-pymol-{}", getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream pqr(dir / "system.pqr");
    for (std::size_t n = 0; n < system.atoms.size(); ++n) {
      const Atom& atom = system.atoms[n];
      pqr << fmt::format("ATOM  {:5d}  C   RES A{:4d}    {:8.3f}{:8.3f}{:8.3f} {:7.4f} {:6.4f}\n",
                         (n + 1) % 100000, (n / 10 + 1) % 10000, atom.position[0], atom.position[1],
                         atom.position[2], atom.charge, 1.7);
    }
    pqr << "END\n";
    std::ofstream(dir / "map_coulomb.py") << kScript;
  }
  const int status = run(fmt::format("{} {} {} {} {} {} {}", shell_quote(m.python),
                                     shell_quote((dir / "map_coulomb.py").string()),
                                     shell_quote((dir / "system.pqr").string()), spacing, buffer,
                                     repetitions, shell_quote((dir / "map.ccp4").string())),
                         output);
  std::filesystem::remove_all(dir);
  const std::string line = last_line(output);
  if (status != 0 || line.rfind("dcs-pymol ", 0) != 0) {
    m.why = fmt::format("PyMOL run failed ({}): {}", status, line);
    return m;
  }
  std::istringstream fields(line.substr(10));
  for (std::string field; fields >> field;) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "version") m.version = value;
    else if (key == "atoms") m.atoms = std::atof(value.c_str());
    else if (key == "points") m.points = std::atof(value.c_str());
    else if (key == "cpu_seconds") m.cpu_seconds = std::atof(value.c_str());
  }
  m.available = m.atoms > 0 && m.points > 0 && m.cpu_seconds > 0;
  if (!m.available) m.why = "PyMOL printed no usable measurement: " + line;
  return m;
}

}  // namespace dcs::bench
