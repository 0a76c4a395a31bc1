// Helpers shared by the atom-reader tests: test data, parsing text and checks on InputError
// (scratch files: scratch_dir.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "../scratch_dir.hpp"

#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"

namespace dcs::test {

inline std::string data_file(const std::string& name) {
  return std::string(DCS_TEST_DATA_DIR) + "/pqr/" + name;
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

inline dcs::System xyzq_from_text(const std::string& text, const std::string& name = "test.xyzq") {
  std::istringstream in(text);
  return dcs::io::parse_xyzq(in, name);
}

/// The identification fields of an atom.
inline void expect_ids(const dcs::Atom& atom, long long serial, const std::string& name,
                       const std::string& res_name, const std::string& chain, long long res_seq) {
  EXPECT_EQ(atom.serial, serial);
  EXPECT_EQ(atom.name, name);
  EXPECT_EQ(atom.res_name, res_name);
  EXPECT_EQ(atom.chain, chain);
  EXPECT_EQ(atom.res_seq, res_seq);
}

/// Position, charge and radius exactly as the decimal text gives them (nearest doubles).
inline void expect_exact(const dcs::Atom& atom, const dcs::Vec3& position, double charge,
                         double radius) {
  EXPECT_EQ(atom.position, position);
  EXPECT_EQ(atom.charge, charge);
  EXPECT_EQ(atom.radius, radius);
}

/// Captures what the library logs (dcs::log()) while alive.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    dcs::log().sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = dcs::log().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace dcs::test
