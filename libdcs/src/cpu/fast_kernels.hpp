// Private to dcs::core: the fast CPU backend's registry (each of its rows in the variant table,
// dcs/variants.hpp, paired with an instruction set) and the kernel interface that
// row_kernel.hpp implements per instruction set.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dcs/backend.hpp"
#include "dcs/physics.hpp"
#include "dcs/variants.hpp"

namespace dcs::cpu_fast {

/// Instruction set a kernel is compiled for. Each one is compiled with a function-level target
/// attribute and chosen at run time, so the binary never needs global -march flags.
enum class Isa { Portable, Avx2, Avx512 };

struct FastKernel {
  std::string_view name;  ///< the variant table's name (--kernel)
  Isa isa;                ///< Portable for "simd" means: resolved to the best supported ISA
  bool automatic;         ///< true for "simd": picks the best ISA this CPU supports
};

/// The registry: the table's cpu-fast potential rows in table order, with their ISAs.
inline constexpr std::array<FastKernel, 4> kFastKernels{{
    {"simd", Isa::Portable, true},
    {"simd-avx512", Isa::Avx512, false},
    {"simd-avx2", Isa::Avx2, false},
    {"simd-portable", Isa::Portable, false},
}};
static_assert(registry_matches_table(BackendKind::CpuFast, VariantKind::Potential, kFastKernels),
              "kFastKernels must list the variant table's cpu-fast kernels in table order");

/// The registry row of a table name (find_variant() first: it names the valid ones).
const FastKernel& find_fast_kernel(std::string_view name);

/// One chunk of staged atoms, structure of arrays (contiguous, in input order).
struct ChunkView {
  const float* ia = nullptr;      ///< nearest grid index along x (integer-valued)
  const float* neg_fx = nullptr;  ///< -(x/hx - ia), grid units
  const float* q = nullptr;       ///< charge * coulomb factor / hx * IsaKernels::charge_scale
  std::size_t count = 0;
};

/// Arguments of one row sweep: adds the chunk's contribution to out_row[0, nx).
struct RowArgs {
  ChunkView atoms;
  const float* yz2 = nullptr;  ///< ((y_j - y_a)^2 + (z_k - z_a)^2) / hx^2 per atom of the chunk
  /// The chunk's atoms with yz2 < min_r2 (or NaN), ascending: the only ones that need the
  /// clamp (stage_row in row_kernel.hpp).
  const std::uint32_t* near = nullptr;
  std::size_t near_count = 0;
  std::int64_t nx = 0;
  float min_r2 = 0.0f;    ///< min_distance^2 / hx^2
  float screen_c = 0.0f;  ///< screened term: -kappa hx log2(e) (dcs::ScreenedPair)
  float* out_row = nullptr;
};

/// Lanes of the widest vector type (AVX-512).
inline constexpr int kMaxLanes = 16;

/// Arguments of one tail sweep: points from the ends of several rows packed into one vector
/// (a row of 129 points leaves 1 after 8 full AVX-512 vectors: 16 rows' last points fill one),
/// each lane with its own (i, j, k); adds the chunk's contribution to *out[lane].
struct TailArgs {
  ChunkView atoms;
  const float* iy = nullptr;      ///< nearest grid index along y (integer-valued)
  const float* neg_fy = nullptr;  ///< -(y residual) / hx
  const float* iz = nullptr;      ///< nearest grid index along z
  const float* neg_fz = nullptr;  ///< -(z residual) / hx
  float y_scale = 1.0f;           ///< hy / hx
  float z_scale = 1.0f;           ///< hz / hx
  float min_r2 = 0.0f;            ///< min_distance^2 / hx^2
  float screen_c = 0.0f;          ///< screened term: -kappa hx log2(e)
  float x[kMaxLanes] = {};        ///< each lane's point: grid indices i, j, k
  float y[kMaxLanes] = {};
  float z[kMaxLanes] = {};
  float* out[kMaxLanes] = {};  ///< where each lane's sum goes
  int lanes = 0;               ///< lanes in use
};

/// Points evaluated per block, relative to the block's centre (points_kernel.hpp): a multiple of
/// every instruction set's Vectors * lanes.
inline constexpr std::size_t kPointsBlock = 64;

/// Arguments of one points sweep: one atom chunk against one block's points, all as float
/// offsets from the block's centre (Å); adds each point's sum over the chunk to out[].
struct PointsArgs {
  const float* ax = nullptr;  ///< the chunk's atoms
  const float* ay = nullptr;
  const float* az = nullptr;
  const float* q = nullptr;      ///< charge * coulomb factor * IsaKernels::charge_scale
  std::size_t count = 0;         ///< atoms in the chunk
  std::uint32_t first_atom = 0;  ///< input index of ax[0]
  const float* px = nullptr;     ///< the block's points, padded to kPointsBlock
  const float* py = nullptr;
  const float* pz = nullptr;
  const std::uint32_t* skip = nullptr;  ///< per point: an input atom index or dcs::kNoAtom
  std::size_t points = 0;               ///< kPointsBlock
  float min_r2 = 0.0f;                  ///< min_distance^2, Å^2
  float screen_c = 0.0f;                ///< screened term: -kappa log2(e), per Å
  float* out = nullptr;
};

/// Stages yz2[a] = (y - ay[a])^2 + (z - az[a])^2 (grid units, float64, rounded once) and
/// writes the indices of the atoms with yz2 < min_r2 (or NaN) to near[], returning their count.
using StageFn = std::size_t (*)(const double* ay, const double* az, std::size_t n, double y,
                                double z, float min_r2, float* yz2, std::uint32_t* near);
using RowFn = void (*)(const RowArgs& args);
using TailFn = void (*)(const TailArgs& args);
using PointsFn = void (*)(const PointsArgs& args);
/// One atom chunk relative to a points block's centre: ax[a] = float(x[a] - centre[0]) and
/// likewise y, z (float64, rounded once), vectorised for the translation unit's instruction set.
using CentreFn = void (*)(const double* x, const double* y, const double* z, std::size_t n,
                          const double* centre, float* ax, float* ay, float* az);

/// The sweeps of one pair model (dcs::PairKind).
struct ModelKernels {
  RowFn row = nullptr;
  TailFn tail = nullptr;  ///< nullptr for one lane (rows never leave a partial vector)
  PointsFn points = nullptr;
};

/// The kernels of one instruction set (row_kernel.hpp instantiated by fast_kernels_<isa>.cpp).
struct IsaKernels {
  StageFn stage = nullptr;
  CentreFn centre = nullptr;
  ModelKernels models[3];     ///< indexed by dcs::PairKind
  int lanes = 1;              ///< lanes of the vector type
  float charge_scale = 1.0f;  ///< the rsqrt policy's kChargeScale: multiply staged charges by it
};

/// Each defined in its own translation unit compiled for that instruction set; call the AVX
/// ones only where isa_supported() says so. The AVX ones exist only in x86 builds.
IsaKernels portable_kernels();
IsaKernels avx2_kernels();
IsaKernels avx512_kernels();

/// Whether this CPU (and OS) can run code compiled for `isa`.
bool isa_supported(Isa isa) noexcept;

/// The best ISA this CPU supports.
Isa best_isa() noexcept;

/// "AVX-512", "AVX2+FMA", "portable C++".
std::string_view isa_name(Isa isa) noexcept;

}  // namespace dcs::cpu_fast
