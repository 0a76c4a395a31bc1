// Output names: what a run writes for each input.
#pragma once

#include <string>

namespace dcs {

/// <dir>/<stem><extension>, where the stem drops ".gz" and the atom-file extension.
std::string default_output_path(const std::string& input, const std::string& dir,
                                const std::string& extension);

}  // namespace dcs
