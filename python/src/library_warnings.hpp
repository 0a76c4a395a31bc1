// The library's warnings (dcs::log() at warning level and above: a small box, a partial file
// replaced, ...) as Python warnings instead of spdlog lines on stderr: a sink collects them
// while a call runs (on any of its threads) and the caller, holding the GIL again, issues each
// through warnings.warn with the category dcs.DcsWarning (a UserWarning), so that Python's
// filters, pytest.warns and logging.captureWarnings see them.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <spdlog/sinks/base_sink.h>

namespace dcs::python {

class WarningCollector final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  /// The messages collected since the last call, oldest first.
  std::vector<std::string> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(messages_, {});
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level >= spdlog::level::warn)
      messages_.emplace_back(msg.payload.begin(), msg.payload.end());
  }
  void flush_() override {}

 private:
  std::vector<std::string> messages_;
};

/// The module's collector (made and attached to dcs::log() by the module's init).
WarningCollector& warning_collector();

/// The category of the warnings issued (dcs.DcsWarning).
PyObject* warning_category();

/// Issues the collected messages as warnings (GIL held). Throws nanobind::python_error when a
/// filter turns one into an exception.
inline void issue_library_warnings() {
  for (const std::string& message : warning_collector().take())
    if (PyErr_WarnEx(warning_category(), message.c_str(), 2) != 0) throw nanobind::python_error();
}

}  // namespace dcs::python
