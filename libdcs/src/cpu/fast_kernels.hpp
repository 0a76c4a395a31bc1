// Private to dcs::core: the registry of the fast CPU backend's potential kernels, shared by
// the backend (to resolve --kernel), cpu_variants() (for `dcs kernels`), the benchmark and the
// unit tests (which run every kernel the CPU supports).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dcs::cpu_fast {

/// Instruction set a kernel is compiled for. Each one is compiled with a function-level target
/// attribute and chosen at run time, so the binary never needs global -march flags.
enum class Isa { Portable, Avx2, Avx512 };

struct FastKernel {
  std::string_view name;     ///< --kernel name
  std::string_view summary;  ///< one line for `dcs kernels`
  Isa isa;                   ///< Portable for "simd" means: resolved to the best supported ISA
  bool automatic;            ///< true for "simd": picks the best ISA this CPU supports
};

/// All kernels of the fast backend, the default ("simd") first.
const std::vector<FastKernel>& fast_kernels();

/// Whether this CPU (and OS) can run code compiled for `isa`.
bool isa_supported(Isa isa) noexcept;

/// The best ISA this CPU supports.
Isa best_isa() noexcept;

/// "AVX-512", "AVX2+FMA", "portable C++".
std::string_view isa_name(Isa isa) noexcept;

}  // namespace dcs::cpu_fast
