// The fast CPU backend: float32, SIMD and threads; the default without a GPU.
//
// Decomposition: the rows of a slab (fixed j, k; nx points along x) are split over threads
// with dcs::parallel_for. A row is computed chunk by chunk (dcs::atom_chunks, as on the GPU):
// for each chunk, dy^2 + dz^2 of every atom is staged once for the row, then the row is swept
// in blocks of 16*V x-points held in registers while the chunk's atoms stream past; a block's
// sum over the chunk is added to the output once, so float32 rounding is bounded per chunk.
//
// Accuracy: float coordinates relative to the grid origin are only good to ~1e-5 Å at 100 Å,
// and near an atom (r close to min_distance) that is a relative error of ~1e-4 in q/r, above
// the 1e-5 * max|V| specification. So distances are formed without large float operands:
// - dy^2 + dz^2 is staged per row in float64 and rounded once;
// - lengths inside the kernels are in units of hx (grid units), so grid point i sits at x = i;
// - x: each atom comes split by dcs::pack_grid_atoms into ia = its nearest grid index (an
//   integer, exact in float) and a residual, staged as fx = rx/hx (|fx| <= 1/2), and
//   dx = (i - ia) - fx: i - ia is exact, so the rounding of dx is relative to |dx| itself.
// Grid units also make dx two additions (on the FP add ports) instead of a multiply-add (on
// the FMA ports, the busy ones); 1/r = (1/hx) * 1/r_grid is folded into the staged charge
// q/hx, and the clamp compares r2/hx^2 with min_distance^2/hx^2, the same condition.
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/parallel.hpp"
#include "dcs/timer.hpp"
#include "fast_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
#define DCS_X86 1
#include <immintrin.h>
#define DCS_TARGET_AVX512 __attribute__((target("avx512f")))
#define DCS_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define DCS_X86 0
#endif

namespace dcs::cpu_fast {
namespace {

/// One chunk of staged atoms, structure of arrays (contiguous, in input order).
struct ChunkView {
  const float* ia = nullptr;      ///< nearest grid index along x (integer-valued)
  const float* neg_fx = nullptr;  ///< -(x/hx - ia), grid units
  const float* q = nullptr;       ///< charge * coulomb factor / hx
  std::size_t count = 0;
};

/// Arguments of one row sweep: adds the chunk's contribution to out_row[0, nx).
struct RowArgs {
  ChunkView atoms;
  const float* yz2 = nullptr;  ///< ((y_j - y_a)^2 + (z_k - z_a)^2) / hx^2 per atom of the chunk
  std::int64_t nx = 0;
  float min_r2 = 0.0f;         ///< min_distance^2 / hx^2
  float* out_row = nullptr;
};

/// Stages yz2[a] = (y - ay[a])^2 + (z - az[a])^2 (grid units, float64, rounded once).
using StageFn = void (*)(const double* ay, const double* az, std::size_t n, double y, double z,
                         float* yz2);
using RowFn = void (*)(const RowArgs& args);

// --- Portable kernel: the shared dcs::coulomb_term, whatever the compiler makes of it -------

// The staging loop, written once and inlined into one function per ISA (each vectorised
// for its target by the compiler).
[[gnu::always_inline]] inline void stage_body(const double* ay, const double* az, std::size_t n,
                                              double y, double z, float* yz2) {
  for (std::size_t a = 0; a < n; ++a) {
    const double dy = y - ay[a];
    const double dz = z - az[a];
    yz2[a] = static_cast<float>(dy * dy + dz * dz);
  }
}

void stage_portable(const double* ay, const double* az, std::size_t n, double y, double z,
                    float* yz2) {
  stage_body(ay, az, n, y, z, yz2);
}

template <int Width>
void block_portable(const RowArgs& args, std::int64_t i0, std::int64_t valid) {
  float ix[Width];
  float acc[Width] = {};
  for (int lane = 0; lane < Width; ++lane) ix[lane] = static_cast<float>(i0 + lane);
  const ChunkView& c = args.atoms;
  for (std::size_t a = 0; a < c.count; ++a) {
    const float ia = c.ia[a], neg_fx = c.neg_fx[a], yz2 = args.yz2[a], q = c.q[a];
    for (int lane = 0; lane < Width; ++lane) {
      const float dx = (ix[lane] - ia) + neg_fx;
      acc[lane] += coulomb_term(q, dx * dx + yz2, args.min_r2);
    }
  }
  for (std::int64_t lane = 0; lane < valid; ++lane) args.out_row[i0 + lane] += acc[lane];
}

void row_portable(const RowArgs& args) {
  constexpr int kWidth = 16;
  for (std::int64_t i0 = 0; i0 < args.nx; i0 += kWidth)
    block_portable<kWidth>(args, i0, std::min<std::int64_t>(kWidth, args.nx - i0));
}

#if DCS_X86
// --- AVX2 + FMA: 8 lanes ------------------------------------------------------------------
//
// Intrinsics instead of dcs::coulomb_term because the term needs a vector reciprocal square
// root: 1/sqrt via vsqrtps + vdivps costs several times the FMA work of a pair, while
// vrsqrtps (12 bits) refined by one Newton step, y = y0/2 * (3 - r2*y0^2), is good to a few
// ulp. Semantics are those of coulomb_term: r2 clamped at min_distance^2, one reciprocal
// square root per pair. The factor 1/2 of the Newton step is applied once per block.

DCS_TARGET_AVX2 void stage_avx2(const double* ay, const double* az, std::size_t n, double y,
                                double z, float* yz2) {
  stage_body(ay, az, n, y, z, yz2);
}

template <int Vectors>
DCS_TARGET_AVX2 void block_avx2(const RowArgs& args, std::int64_t i0, std::int64_t valid) {
  const __m256 lane = _mm256_setr_ps(0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f);
  __m256 ix[Vectors];
  __m256 acc[Vectors];
  for (int v = 0; v < Vectors; ++v) {
    ix[v] = _mm256_add_ps(_mm256_set1_ps(static_cast<float>(i0 + 8 * v)), lane);
    acc[v] = _mm256_setzero_ps();
  }
  const __m256 min_r2 = _mm256_set1_ps(args.min_r2);
  const __m256 three = _mm256_set1_ps(3.0f);
  const ChunkView& c = args.atoms;
  for (std::size_t a = 0; a < c.count; ++a) {
    const __m256 ia = _mm256_broadcast_ss(c.ia + a);
    const __m256 neg_fx = _mm256_broadcast_ss(c.neg_fx + a);
    const __m256 yz2 = _mm256_broadcast_ss(args.yz2 + a);
    const __m256 q = _mm256_broadcast_ss(c.q + a);
    for (int v = 0; v < Vectors; ++v) {
      const __m256 dx = _mm256_add_ps(_mm256_sub_ps(ix[v], ia), neg_fx);
      const __m256 r2 = _mm256_max_ps(_mm256_fmadd_ps(dx, dx, yz2), min_r2);
      const __m256 y0 = _mm256_rsqrt_ps(r2);
      const __m256 s = _mm256_fnmadd_ps(_mm256_mul_ps(r2, y0), y0, three);
      acc[v] = _mm256_fmadd_ps(_mm256_mul_ps(q, y0), s, acc[v]);
    }
  }
  const __m256 half = _mm256_set1_ps(0.5f);
  for (int v = 0; v < Vectors; ++v) {
    const std::int64_t start = 8 * v;
    if (start >= valid) break;
    float* out = args.out_row + i0 + start;
    if (valid - start >= 8) {
      _mm256_storeu_ps(out, _mm256_fmadd_ps(acc[v], half, _mm256_loadu_ps(out)));
    } else {
      alignas(32) float part[8];
      _mm256_store_ps(part, _mm256_mul_ps(acc[v], half));
      for (std::int64_t l = 0; l < valid - start; ++l) out[l] += part[l];
    }
  }
}

template <int Vectors>
DCS_TARGET_AVX2 void row_avx2(const RowArgs& args) {
  constexpr std::int64_t kWidth = 8 * Vectors;
  std::int64_t i0 = 0;
  for (; i0 + kWidth <= args.nx; i0 += kWidth) block_avx2<Vectors>(args, i0, kWidth);
  const std::int64_t rest = args.nx - i0;
  if (rest <= 0) return;
  // The tail uses only as many vectors as it needs.
  switch ((rest + 7) / 8) {
    case 1: block_avx2<1>(args, i0, rest); break;
    case 2: block_avx2<2>(args, i0, rest); break;
    case 3: block_avx2<3>(args, i0, rest); break;
    default: block_avx2<Vectors>(args, i0, rest); break;
  }
}

// --- AVX-512: 16 lanes --------------------------------------------------------------------
//
// As AVX2 with vrsqrt14ps (14 bits) and one Newton step (error ~1e-8 before rounding), and
// masked loads/stores for the row's tail.

DCS_TARGET_AVX512 void stage_avx512(const double* ay, const double* az, std::size_t n, double y,
                                    double z, float* yz2) {
  stage_body(ay, az, n, y, z, yz2);
}

// GCC 12's unmasked _mm512_max_ps/_mm512_rsqrt14_ps merge into _mm512_undefined_ps(), which
// trips -Wmaybe-uninitialized; the all-lanes masked forms compile to the same instructions.
constexpr __mmask16 kAllLanes = 0xFFFF;
DCS_TARGET_AVX512 inline __m512 max_512(__m512 a, __m512 b) {
  return _mm512_mask_max_ps(a, kAllLanes, a, b);
}
DCS_TARGET_AVX512 inline __m512 rsqrt14_512(__m512 a) {
  return _mm512_mask_rsqrt14_ps(a, kAllLanes, a);
}

template <int Vectors>
DCS_TARGET_AVX512 void block_avx512(const RowArgs& args, std::int64_t i0, std::int64_t valid) {
  const __m512 lane = _mm512_setr_ps(0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f,
                                     11.f, 12.f, 13.f, 14.f, 15.f);
  __m512 ix[Vectors];
  __m512 acc[Vectors];
  for (int v = 0; v < Vectors; ++v) {
    ix[v] = _mm512_add_ps(_mm512_set1_ps(static_cast<float>(i0 + 16 * v)), lane);
    acc[v] = _mm512_setzero_ps();
  }
  const __m512 min_r2 = _mm512_set1_ps(args.min_r2);
  const __m512 three = _mm512_set1_ps(3.0f);
  const ChunkView& c = args.atoms;
  for (std::size_t a = 0; a < c.count; ++a) {
    const __m512 ia = _mm512_set1_ps(c.ia[a]);
    const __m512 neg_fx = _mm512_set1_ps(c.neg_fx[a]);
    const __m512 yz2 = _mm512_set1_ps(args.yz2[a]);
    const __m512 q = _mm512_set1_ps(c.q[a]);
    for (int v = 0; v < Vectors; ++v) {
      const __m512 dx = _mm512_add_ps(_mm512_sub_ps(ix[v], ia), neg_fx);
      const __m512 r2 = max_512(_mm512_fmadd_ps(dx, dx, yz2), min_r2);
      const __m512 y0 = rsqrt14_512(r2);
      const __m512 s = _mm512_fnmadd_ps(_mm512_mul_ps(r2, y0), y0, three);
      acc[v] = _mm512_fmadd_ps(_mm512_mul_ps(q, y0), s, acc[v]);
    }
  }
  const __m512 half = _mm512_set1_ps(0.5f);
  for (int v = 0; v < Vectors; ++v) {
    const std::int64_t start = 16 * v;
    if (start >= valid) break;
    const std::int64_t n = std::min<std::int64_t>(16, valid - start);
    const auto mask = static_cast<__mmask16>((1u << n) - 1u);
    float* out = args.out_row + i0 + start;
    _mm512_mask_storeu_ps(out, mask, _mm512_fmadd_ps(acc[v], half, _mm512_maskz_loadu_ps(mask, out)));
  }
}

template <int Vectors>
DCS_TARGET_AVX512 void row_avx512(const RowArgs& args) {
  constexpr std::int64_t kWidth = 16 * Vectors;
  std::int64_t i0 = 0;
  for (; i0 + kWidth <= args.nx; i0 += kWidth) block_avx512<Vectors>(args, i0, kWidth);
  const std::int64_t rest = args.nx - i0;
  if (rest <= 0) return;
  switch ((rest + 15) / 16) {
    case 1: block_avx512<1>(args, i0, rest); break;
    case 2: block_avx512<2>(args, i0, rest); break;
    case 3: block_avx512<3>(args, i0, rest); break;
    default: block_avx512<Vectors>(args, i0, rest); break;
  }
}
#endif  // DCS_X86

// 4 vectors per block: enough independent accumulators to hide the FMA latency, few enough
// that short rows (and row tails) waste little.
constexpr int kVectorsPerBlock = 4;

struct IsaKernels {
  StageFn stage;
  RowFn row;
};

IsaKernels kernels_for(Isa isa) {
  switch (isa) {
#if DCS_X86
    case Isa::Avx512: return {&stage_avx512, &row_avx512<kVectorsPerBlock>};
    case Isa::Avx2: return {&stage_avx2, &row_avx2<kVectorsPerBlock>};
#endif
    default: return {&stage_portable, &row_portable};
  }
}

/// Splits [0, n) over threads, reduces each range with `reduce_range` and combines the partial
/// results in range order, so the result does not depend on thread timing.
template <class Accum, class RangeFn>
Accum reduce_in_order(std::size_t n, unsigned threads, const RangeFn& reduce_range) {
  constexpr std::size_t kGrain = std::size_t{1} << 16;  // below this a thread is not worth it
  std::mutex mutex;
  std::vector<std::pair<std::size_t, Accum>> parts;
  parallel_for(n, threads, [&](std::size_t begin, std::size_t end) {
    const Accum part = reduce_range(begin, end);
    const std::lock_guard<std::mutex> lock(mutex);
    parts.emplace_back(begin, part);
  }, kGrain);
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Accum total;
  for (const auto& part : parts) total = Accum::combine(total, part.second);
  return total;
}

class FastBackend final : public PotentialBackend {
 public:
  explicit FastBackend(const BackendOptions& options)
      : threads_(resolve_threads(options.threads)) {
    const std::string kernel = options.kernel.empty() ? "simd" : options.kernel;
    const FastKernel* found = nullptr;
    std::string valid;
    for (const FastKernel& candidate : fast_kernels()) {
      valid += (valid.empty() ? "" : ", ") + std::string(candidate.name);
      if (candidate.name == kernel) found = &candidate;
    }
    if (found == nullptr)
      throw UsageError("unknown kernel '" + kernel + "' for the cpu-fast backend (valid: " +
                       valid + ")");
    isa_ = found->automatic ? best_isa() : found->isa;
    if (!isa_supported(isa_))
      throw UsageError("kernel '" + kernel + "' needs " + std::string(isa_name(isa_)) +
                       ", which this CPU does not support (use 'simd' to pick the best "
                       "supported instruction set)");
    kernel_name_ = std::string(found->name);
    kernels_ = kernels_for(isa_);

    reduction_ = options.reduction.empty() ? "cpu-threaded" : options.reduction;
    if (reduction_ != "cpu-threaded" && reduction_ != "cpu-serial")
      throw UsageError("unknown reduction '" + reduction_ + "' for the cpu-fast backend "
                       "(valid: cpu-threaded, cpu-serial)");
    serial_reduction_ = reduction_ == "cpu-serial";
  }

  std::string name() const override { return "cpu-fast"; }
  std::string kernel_name() const override { return kernel_name_; }
  std::string reduction_name() const override { return reduction_; }
  std::string device_name() const override {
    return fmt::format("{}, {} thread{}, {}", dcs::cpu_model_name(), threads_, threads_ == 1 ? "" : "s",
                       isa_name(isa_));
  }
  double tolerance() const override { return 1e-5; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    for (std::size_t axis = 0; axis < 3; ++axis)
      if (grid.counts[axis] < 1 || !(grid.spacing[axis] > 0.0) || !std::isfinite(grid.spacing[axis]))
        throw UsageError("cpu-fast: the grid needs positive counts and spacings");
    const double factor = coulomb_factor(physics);  // validates physics
    grid_ = grid;
    const std::vector<GridAtom> packed = pack_grid_atoms(system, grid, factor);

    const std::size_t n = system.atoms.size();
    const double hx = grid.spacing[0];
    ia_.resize(n);
    neg_fx_.resize(n);
    q_.resize(n);
    ay_.resize(n);
    az_.resize(n);
    for (std::size_t a = 0; a < n; ++a) {
      const Vec3& p = system.atoms[a].position;
      ia_[a] = packed[a].ix;  // grid units from here on
      neg_fx_[a] = static_cast<float>(-static_cast<double>(packed[a].rx) / hx);
      q_[a] = static_cast<float>(static_cast<double>(packed[a].q) / hx);
      ay_[a] = (p[1] - grid.origin[1]) / hx;
      az_[a] = (p[2] - grid.origin[2]) / hx;
    }
    chunks_ = atom_chunks(n);
    // The clamp keeps r2 >= a normal float even for absurdly small min_distance, so that the
    // reciprocal square root stays finite.
    const double min_r = physics.min_distance / hx;
    min_r2_ = std::max(static_cast<float>(min_r * min_r), FLT_MIN);
    prepared_ = true;
    timings_ = {};
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!prepared_) throw UsageError("cpu-fast: compute() called before prepare()");
    if (slab.z_begin < 0 || slab.z_count < 0 || slab.z_begin + slab.z_count > grid_.nz())
      throw UsageError(fmt::format("cpu-fast: slab [{}, {}) outside the grid's {} planes",
                                   slab.z_begin, slab.z_begin + slab.z_count, grid_.nz()));
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t ny = grid_.ny();
    const std::int64_t nx = grid_.nx();
    const std::size_t rows = static_cast<std::size_t>(slab.z_count * ny);
    const std::size_t chunk_capacity = std::min(ia_.size(), kAtomsPerChunk);
    parallel_for(rows, threads_, [&](std::size_t begin, std::size_t end) {
      std::vector<float> yz2(chunk_capacity);
      RowArgs args;
      args.yz2 = yz2.data();
      args.nx = nx;
      args.min_r2 = min_r2_;
      for (std::size_t row = begin; row < end; ++row) {
        const std::int64_t k = slab.z_begin + static_cast<std::int64_t>(row) / ny;
        const std::int64_t j = static_cast<std::int64_t>(row) % ny;
        const double y = static_cast<double>(j) * grid_.spacing[1] / grid_.spacing[0];
        const double z = static_cast<double>(k) * grid_.spacing[2] / grid_.spacing[0];
        args.out_row = out + row * static_cast<std::size_t>(nx);
        std::fill(args.out_row, args.out_row + nx, 0.0f);
        for (const AtomChunk& chunk : chunks_) {
          kernels_.stage(ay_.data() + chunk.begin, az_.data() + chunk.begin, chunk.count, y, z,
                         yz2.data());
          args.atoms = {ia_.data() + chunk.begin, neg_fx_.data() + chunk.begin,
                        q_.data() + chunk.begin, chunk.count};
          kernels_.row(args);
        }
      }
    });
    timings_.kernels += seconds_since(start);
    const auto stats_start = std::chrono::steady_clock::now();
    plane_statistics(out, grid_.plane_points(), static_cast<std::size_t>(slab.z_count), threads_,
                     plane_stats);
    timings_.statistics += seconds_since(stats_start);
  }

  StatsAccum statistics(const float* values, std::size_t n) override {
    const auto start = std::chrono::steady_clock::now();
    const StatsAccum accum =
        serial_reduction_
            ? cpu_statistics(values, n)
            : reduce_in_order<StatsAccum>(n, threads_, [values](std::size_t begin, std::size_t end) {
                return cpu_statistics(values + begin, end - begin);
              });
    timings_.statistics += seconds_since(start);
    return accum;
  }

  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    const auto start = std::chrono::steady_clock::now();
    const DiffAccum accum =
        serial_reduction_
            ? cpu_difference(values, reference, n)
            : reduce_in_order<DiffAccum>(n, threads_, [values, reference](std::size_t begin,
                                                                          std::size_t end) {
                return cpu_difference(values + begin, reference + begin, end - begin);
              });
    timings_.statistics += seconds_since(start);
    return accum;
  }

  BackendTimings timings() const override { return timings_; }

 private:
  unsigned threads_;
  Isa isa_ = Isa::Portable;
  std::string kernel_name_;
  IsaKernels kernels_{};
  std::string reduction_;
  bool serial_reduction_ = false;

  bool prepared_ = false;
  GridSpec grid_;
  std::vector<float> ia_, neg_fx_, q_;  // per atom, input order
  std::vector<double> ay_, az_;         // relative to the grid origin, in units of hx
  std::vector<AtomChunk> chunks_;
  float min_r2_ = 0.0f;
  BackendTimings timings_;
};

}  // namespace

const std::vector<FastKernel>& fast_kernels() {
  static const std::vector<FastKernel> kernels{
      {"simd", "float32 on the best instruction set of this CPU (AVX-512, else AVX2+FMA, else "
               "portable), all threads; bound by vector rsqrt + Newton step",
       Isa::Portable, true},
      {"simd-avx512", "16-lane AVX-512: rsqrt14 + one Newton step, 64 x-points in registers "
                      "per atom sweep; bound by the FMA ports",
       Isa::Avx512, false},
      {"simd-avx2", "8-lane AVX2+FMA: rsqrt (12 bits) + one Newton step, 32 x-points in "
                    "registers; bound by the FMA ports",
       Isa::Avx2, false},
      {"simd-portable", "plain C++ around dcs::coulomb_term<float> (1/sqrt), vectorised as the "
                        "compiler can for the baseline ISA; bound by sqrt and divide",
       Isa::Portable, false},
  };
  return kernels;
}

bool isa_supported(Isa isa) noexcept {
  switch (isa) {
    case Isa::Portable: return true;
#if DCS_X86
    case Isa::Avx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default: return false;
  }
}

Isa best_isa() noexcept {
  if (isa_supported(Isa::Avx512)) return Isa::Avx512;
  if (isa_supported(Isa::Avx2)) return Isa::Avx2;
  return Isa::Portable;
}

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Avx512: return "AVX-512";
    case Isa::Avx2: return "AVX2+FMA";
    case Isa::Portable: return "portable C++";
  }
  return "?";
}

}  // namespace dcs::cpu_fast

namespace dcs {

std::unique_ptr<PotentialBackend> make_cpu_fast_backend(const BackendOptions& options) {
  return std::make_unique<cpu_fast::FastBackend>(options);
}

}  // namespace dcs
