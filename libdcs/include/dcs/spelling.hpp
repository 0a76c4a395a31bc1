// Suggestions for misspelt names ("did you mean --dielectric?", "did you mean resname?").
#pragma once

#include <cstddef>
#include <string_view>

namespace dcs {

/// Levenshtein distance: the insertions, deletions and substitutions that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace dcs
