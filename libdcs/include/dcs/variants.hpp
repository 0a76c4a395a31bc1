// Names and one-line summaries of compute and reduction variants, as listed by `dcs kernels`
// and accepted by --kernel / --reduction. Each backend publishes its own list; the lists are
// generated from the registries that also drive the tests and the benchmark.
#pragma once

#include <string>
#include <vector>

namespace dcs {

enum class VariantKind { Potential, Reduction };

struct VariantInfo {
  std::string name;      ///< e.g. "coalesced"
  std::string summary;   ///< one line: what it is and what should limit it
  std::string backend;   ///< "cpu-reference", "cpu-fast", "cuda"
  VariantKind kind = VariantKind::Potential;
  bool is_default = false;
};

}  // namespace dcs
