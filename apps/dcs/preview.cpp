#include "preview.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/log.hpp"

extern char** environ;

namespace dcs::app {

namespace {

namespace fs = std::filesystem;

// The directory of the running binary, from /proc/self/exe (empty when it cannot be read).
fs::path executable_dir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path{} : exe.parent_path();
}

struct PreviewScript {
  std::string path;  ///< dcs_preview.py; empty when not found
  bool build_tree = false;
};

// Installed: <bin>/DCS_PYTHON_DIR_FROM_BIN/dcs_preview.py (share/dcs/python beside bin/), found
// relative to the binary so a moved prefix works. The source tree's python/ only for the binary
// of the build tree (DCS_BUILD_BIN_DIR): an installed binary never looks into the source tree.
PreviewScript find_script() {
  const fs::path bin = executable_dir();
  if (bin.empty()) return {};
  const fs::path installed = (bin / DCS_PYTHON_DIR_FROM_BIN / "dcs_preview.py").lexically_normal();
  std::error_code error;
  if (fs::is_regular_file(installed, error)) return {installed.string(), false};
  if (bin == fs::path(DCS_BUILD_BIN_DIR)) return {DCS_SOURCE_ROOT "/python/dcs_preview.py", true};
  return {};
}

}  // namespace

std::string preview_python(bool build_tree) {
  if (const char* python = std::getenv("DCS_PYTHON"); python != nullptr && *python != '\0')
    return python;
  if (build_tree) {
    const std::string venv = DCS_SOURCE_ROOT "/.venv-viewers/bin/python";
    if (::access(venv.c_str(), X_OK) == 0) return venv;
  }
  return DCS_PREVIEW_PYTHON;  // the build's choice (apps/dcs/CMakeLists.txt), not PATH's
}

int run_preview(const PreviewCommand& command) {
  const PreviewScript script = find_script();
  if (script.path.empty()) {
    log().error(
        "dcs preview: its Python helper is missing: looked for {}/dcs_preview.py beside "
        "this binary; reinstall dcs (cmake --install)",
        (executable_dir() / DCS_PYTHON_DIR_FROM_BIN).lexically_normal().string());
    return 1;
  }
  const std::string python = preview_python(script.build_tree);
  std::vector<std::string> args{python, script.path, command.input, "--view", command.view};
  if (!command.output.empty()) args.insert(args.end(), {"-o", command.output});
  // Only those given: unset, the script takes the file's colour range.
  for (const auto& [name, value] :
       {std::pair{"--percentile", command.percentile}, std::pair{"--probe", command.probe},
        std::pair{"--shell", command.shell}})
    if (value) args.insert(args.end(), {name, fmt::format("{}", *value)});
  for (const std::string& slice : command.slices) args.push_back("--slice=" + slice);
  if (command.force) args.emplace_back("--force");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int error = ::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (error != 0) {
    log().error(
        "dcs preview: cannot run {}: {} (set DCS_PYTHON to a Python with h5py, numpy and "
        "matplotlib; Debian: apt install python3-h5py python3-matplotlib)",
        python, std::strerror(error));
    return 1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      log().error("dcs preview: waitpid: {}", std::strerror(errno));
      return 1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  log().error("dcs preview: {} ended by signal {}", python, WTERMSIG(status));
  return 1;
}

}  // namespace dcs::app
