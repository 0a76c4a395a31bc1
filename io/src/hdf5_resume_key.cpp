// What a partial file must match to be resumed (dcs/io/map_store.hpp's ResumeKey): the settings
// text stored in /resume and /provenance, and the comparison that names what differs.
#include <hdf5.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/map_store.hpp"
#include "hdf5_support.hpp"

namespace dcs::io {

using h5::Failure;
using h5::Handle;
using h5::QuietErrors;

namespace {

std::vector<std::pair<std::string, std::string>> parse_settings(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> settings;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const std::size_t eq = line.find(" = ");
    if (eq != std::string::npos) settings.emplace_back(line.substr(0, eq), line.substr(eq + 3));
    begin = end + 1;
  }
  return settings;
}

}  // namespace

std::string settings_text(const ResumeKey& key) {
  std::string text;
  for (const auto& [name, value] : key.settings) text += name + " = " + value + "\n";
  return text;
}

namespace h5 {

void check_resume_key(hid_t resume, const ResumeKey& key, const Failure& failure) {
  // What differs, in words: the input, then each setting.
  const std::string stored_sha = h5::read_string_attribute(resume, "input_sha256", failure);
  std::vector<std::string> differences;
  if (stored_sha != key.input_sha256)
    differences.push_back(
        fmt::format("the input file differs (SHA-256 {} in the partial file, {} "
                    "now)",
                    stored_sha.substr(0, 12), key.input_sha256.substr(0, 12)));
  const auto stored = parse_settings(h5::read_string_attribute(resume, "settings", failure));
  for (const auto& [name, value] : key.settings) {
    const auto found = std::find_if(stored.begin(), stored.end(),
                                    [&key_name = name](const auto& entry) {  // clang < 16:
                                      return entry.first == key_name;        // no binding captures
                                    });
    if (found == stored.end())
      differences.push_back(fmt::format("{} is not recorded in the partial file", name));
    else if (found->second != value)
      differences.push_back(fmt::format("{} was {}, now {}", name, found->second, value));
  }
  if (!differences.empty()) {
    std::string text;
    for (const std::string& d : differences) text += (text.empty() ? "" : "; ") + d;
    throw ResumeMismatch(
        fmt::format("cannot resume {}: {}. Run without --resume to start over "
                    "(the partial file is then replaced)",
                    failure.path(), text));
  }
}

}  // namespace h5

ResumeKey read_completed_key(const std::string& path) {
  h5::prepare_library();
  ResumeKey key;
  const QuietErrors quiet;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return key;
  const Handle owner(file, H5Fclose);
  const Failure failure(path, true);
  try {
    const Handle prov(failure.id(H5Gopen2(file, "provenance", H5P_DEFAULT), "H5Gopen2"), H5Gclose);
    key.input_sha256 = h5::read_string_attribute(prov.get(), "input_sha256", failure);
    key.settings = parse_settings(h5::read_string_attribute(prov.get(), "settings", failure));
  } catch (const Error&) {
    return ResumeKey{};
  }
  return key;
}

}  // namespace dcs::io
