// The first check of every input path (input_path.hpp).
#include "input_path.hpp"

#include <filesystem>
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

}  // namespace dcs::io::detail
