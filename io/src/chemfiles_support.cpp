// What the chemfiles-based readers share (chemfiles_support.hpp).
#include "chemfiles_support.hpp"

#include <cstddef>
#include <mutex>
#include <string>

#include <chemfiles/misc.hpp>

#include "dcs/log.hpp"

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

}  // namespace dcs::io::detail
