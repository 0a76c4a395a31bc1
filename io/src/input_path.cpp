// The first checks of every input path (input_path.hpp).
#include "input_path.hpp"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "dcs/error.hpp"

namespace dcs::io::detail {

void check_input_exists(const std::string& path, const char* kind) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) {
    throw InputError(path, 0,
                     error && error != std::errc::no_such_file_or_directory
                         ? "cannot access the file: " + error.message()
                         : "no such file");
  }
  if (fs::is_directory(status))
    throw InputError(path, 0, std::string("is a directory, not ") + kind);
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

bool gzipped_name(const std::string& path) { return lower_file_name(path).ends_with(".gz"); }

}  // namespace dcs::io::detail
