// Helpers shared by the atom-reader tests: temporary files and checks on InputError.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"

namespace dcs::test {

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            ("dcs-io-pqr-" + std::to_string(::getpid()) + "-" + std::to_string(stamp));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string data_file(const std::string& name) {
  return std::string(DCS_TEST_DATA_DIR) + "/pqr/" + name;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// Runs `call`, which must throw dcs::InputError for `file` at `line` whose reason contains
/// every string of `parts`; the full message must start with "<file>:<line>: " (or "<file>: "
/// for line 0).
inline void expect_input_error(const std::function<void()>& call, const std::string& file,
                               std::uint64_t line, std::initializer_list<std::string> parts) {
  try {
    call();
    ADD_FAILURE() << "expected dcs::InputError at " << file << ":" << line << ", nothing thrown";
  } catch (const dcs::InputError& error) {
    EXPECT_EQ(error.file(), file);
    EXPECT_EQ(error.line(), line) << error.what();
    const std::string prefix = line > 0 ? file + ":" + std::to_string(line) + ": " : file + ": ";
    EXPECT_EQ(std::string(error.what()).rfind(prefix, 0), 0u)
        << "message '" << error.what() << "' does not start with '" << prefix << "'";
    for (const std::string& part : parts) {
      EXPECT_NE(error.reason().find(part), std::string::npos)
          << "reason '" << error.reason() << "' lacks '" << part << "'";
    }
    EXPECT_EQ(error.exit_code(), dcs::ExitCode::kInputError);
  }
}

inline dcs::System pqr_from_text(const std::string& text, const std::string& name = "test.pqr") {
  std::istringstream in(text);
  return dcs::io::parse_pqr(in, name);
}

inline dcs::System xyzq_from_text(const std::string& text,
                                  const std::string& name = "test.xyzq") {
  std::istringstream in(text);
  return dcs::io::parse_xyzq(in, name);
}

}  // namespace dcs::test
