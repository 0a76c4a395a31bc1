#include "preview.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "dcs/log.hpp"

extern char** environ;

namespace dcs::app {

std::string preview_python() {
  if (const char* python = std::getenv("DCS_PYTHON"); python != nullptr && *python != '\0')
    return python;
  const std::string venv = std::string(DCS_SOURCE_ROOT) + "/.venv-viewers/bin/python";
  if (::access(venv.c_str(), X_OK) == 0) return venv;
  return "python3";
}

int run_preview(const PreviewCommand& command) {
  const std::string python = preview_python();
  std::vector<std::string> args{python, std::string(DCS_SOURCE_ROOT) + "/python/dcs_preview.py",
                                command.input, "--percentile", fmt::format("{}", command.percentile)};
  if (!command.output.empty()) args.insert(args.end(), {"-o", command.output});
  args.insert(args.end(), {"--view", command.view, "--probe", fmt::format("{}", command.probe),
                           "--shell", fmt::format("{}", command.shell)});
  for (const std::string& slice : command.slices) args.push_back("--slice=" + slice);
  if (command.force) args.emplace_back("--force");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int error = ::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (error != 0) {
    log().error("dcs preview: cannot run {}: {} (set DCS_PYTHON to a Python with h5py and "
                "matplotlib, or run scripts/setup-viewers.sh)", python, std::strerror(error));
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
