// The library's logger: spdlog's coloured stderr sink behind one that escapes control
// characters in every message.
#include "dcs/log.hpp"

#include <mutex>

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace dcs {
namespace {

/// Escapes each message's control characters, then hands it to `inner`.
class PrintableSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit PrintableSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    const std::string text =
        printable(std::string_view(message.payload.data(), message.payload.size()));
    spdlog::details::log_msg copy = message;
    copy.payload = text;
    inner_->log(copy);
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += '\t';
    else if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("dcs")) return existing;
    auto sink =
        std::make_shared<PrintableSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    auto made = std::make_shared<spdlog::logger>("dcs", sink);
    spdlog::register_logger(made);
    return made;
  }();
  return *logger;
}

}  // namespace dcs
