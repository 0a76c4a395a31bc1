// What the chemfiles-based readers share (chemfiles_support.hpp).
#include "chemfiles_support.hpp"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>

#include <chemfiles/misc.hpp>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "input_path.hpp"

namespace dcs::io::detail {

void route_chemfiles_warnings() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The molfile plugins end their messages with a newline, which printable() would show as
    // a literal "\n": trailing whitespace is dropped first.
    chemfiles::set_warning_callback([](const std::string& message) {
      const std::size_t end = message.find_last_not_of(" \t\r\n");
      log().warn("chemfiles: {}",
                 printable(message.substr(0, end == std::string::npos ? 0 : end + 1)));
    });
  });
}

void check_readable(const std::string& path) {
  check_input_exists(path, "a topology or trajectory file");
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::is_regular_file(status)) throw InputError(path, 0, "not a regular file");
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
  } else {
    throw InputError(path, 0, "cannot open: " + std::system_category().message(errno));
  }
}

std::string lower_file_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return name;
}

}  // namespace dcs::io::detail
