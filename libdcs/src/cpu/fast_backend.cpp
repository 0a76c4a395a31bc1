// The fast CPU backend: float32, SIMD and threads; the default without a GPU.
//
// Decomposition: the rows of a slab (fixed j, k; nx points along x) are split over the
// backend's persistent dcs::ThreadPool (threads started once, woken per slab). A row is computed
// chunk by chunk (dcs::atom_chunks, as on the GPU) by the kernel of row_kernel.hpp: dy^2 + dz^2 of
// every atom staged once per row, then blocks of x-points in registers while the chunk's atoms
// stream past, every pair through dcs::add_coulomb_term. The kernel is one template instantiated
// per instruction set (fast_kernels_avx512.cpp, fast_kernels_avx2.cpp, fast_kernels_portable.cpp,
// each compiled with its own flags) and chosen at run time from what cpuid reports.
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
#else
#define DCS_X86 0
#endif

namespace dcs::cpu_fast {
namespace {

IsaKernels kernels_for(Isa isa) {
  switch (isa) {
#if DCS_X86
    case Isa::Avx512: return avx512_kernels();
    case Isa::Avx2: return avx2_kernels();
#endif
    default: return portable_kernels();
  }
}

/// Splits [0, n) over the pool's threads, reduces each range with `reduce_range` and combines
/// the partial results in range order, so the result does not depend on thread timing.
template <class Accum, class RangeFn>
Accum reduce_in_order(std::size_t n, ThreadPool& pool, const RangeFn& reduce_range) {
  constexpr std::size_t kGrain = std::size_t{1} << 16;  // below this a thread is not worth it
  std::mutex mutex;
  std::vector<std::pair<std::size_t, Accum>> parts;
  pool.parallel_for(
      n,
      [&](std::size_t begin, std::size_t end) {
        const Accum part = reduce_range(begin, end);
        const std::lock_guard<std::mutex> lock(mutex);
        parts.emplace_back(begin, part);
      },
      kGrain);
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Accum total;
  for (const auto& part : parts) total = Accum::combine(total, part.second);
  return total;
}

class FastBackend final : public PotentialBackend {
 public:
  explicit FastBackend(const BackendOptions& options)
      : threads_(resolve_threads(options.threads)), pool_(threads_) {
    const Variant& kernel =
        find_variant(BackendKind::CpuFast, VariantKind::Potential, options.kernel);
    const FastKernel& found = find_fast_kernel(kernel.name);
    isa_ = found.automatic ? best_isa() : found.isa;
    if (!isa_supported(isa_))
      throw UsageError("kernel '" + std::string(kernel.name) + "' needs " +
                       std::string(isa_name(isa_)) +
                       ", which this CPU does not support (use 'simd' to pick the best "
                       "supported instruction set)");
    kernel_name_ = std::string(kernel.name);
    kernels_ = kernels_for(isa_);

    reduction_ = std::string(
        find_variant(BackendKind::CpuFast, VariantKind::Reduction, options.reduction).name);
    serial_reduction_ = reduction_ == "cpu-serial";
  }

  std::string name() const override { return "cpu-fast"; }
  std::string kernel_name() const override { return kernel_name_; }
  std::string reduction_name() const override { return reduction_; }
  std::string device_name() const override {
    return fmt::format("{}, {} thread{}, {}", dcs::cpu_model_name(), threads_,
                       threads_ == 1 ? "" : "s", isa_name(isa_));
  }
  double tolerance() const override { return 1e-5; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    require_axis_aligned(grid, "the exact CPU backend");
    for (std::size_t axis = 0; axis < 3; ++axis)
      if (grid.counts[axis] < 1 || !(grid.spacing[axis] > 0.0) ||
          !std::isfinite(grid.spacing[axis]))
        throw UsageError("cpu-fast: the grid needs positive counts and spacings");
    const double factor = coulomb_factor(physics);  // validates physics
    grid_ = grid;
    const std::vector<GridAtom> packed = pack_grid_atoms(system, grid, factor);

    const std::size_t n = system.atoms.size();
    const double hx = grid.spacing[0];
    // g(r) = g(hx r_grid) = hx^-power g_grid(r_grid) (and kappa hx for the screened term): the
    // factor hx^-power goes into the staged charges.
    const PairTerm term = pair_term(physics);
    model_ = term.kind;
    screen_c_ = static_cast<float>(screened_exponent_scale(term.kappa * hx));
    const double length_scale = term.length_power() == 2 ? hx * hx : hx;
    ia_.resize(n);
    neg_fx_.resize(n);
    q_.resize(n);
    ay_.resize(n);
    az_.resize(n);
    iy_.resize(n);
    neg_fy_.resize(n);
    iz_.resize(n);
    neg_fz_.resize(n);
    for (std::size_t a = 0; a < n; ++a) {
      const Vec3& p = system.atoms[a].position;
      ia_[a] = packed[a].ix;  // grid units from here on
      neg_fx_[a] = static_cast<float>(-static_cast<double>(packed[a].rx) / hx);
      // The rsqrt policy's scale (1/2 for the Newton step) is a power of two: exact.
      q_[a] = static_cast<float>(static_cast<double>(packed[a].q) / length_scale) *
              kernels_.charge_scale;
      ay_[a] = (p[1] - grid.origin[1]) / hx;
      az_[a] = (p[2] - grid.origin[2]) / hx;
      iy_[a] = packed[a].iy;  // for the row tails (kernels_.tail)
      neg_fy_[a] = static_cast<float>(-static_cast<double>(packed[a].ry) / hx);
      iz_[a] = packed[a].iz;
      neg_fz_[a] = static_cast<float>(-static_cast<double>(packed[a].rz) / hx);
    }
    y_scale_ = static_cast<float>(grid.spacing[1] / hx);
    z_scale_ = static_cast<float>(grid.spacing[2] / hx);
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
    // Row tails: a row whose length is not a multiple of the vector width ends in a partial
    // vector that costs a whole one (129 points = 8 AVX-512 vectors + 1 point: 9 sweeps for
    // 8.06). Where the tail is at most half a vector, the tails of several consecutive rows
    // share one vector instead (kernels_.tail: 16 rows' last points at 129), and the rows sweep
    // only their whole vectors. A lane's arithmetic does not depend on its neighbours, so a
    // point's value does not depend on how rows are grouped (threads, slabs).
    const std::int64_t lanes = kernels_.lanes;
    const std::int64_t tail = nx % lanes;
    const bool pack_tails = kernels_.models[0].tail != nullptr && tail > 0 && 2 * tail <= lanes;
    const std::int64_t swept = pack_tails ? nx - tail : nx;
    const std::size_t rows_per_group = pack_tails ? static_cast<std::size_t>(lanes / tail) : 1;
    pool_.parallel_for(rows, [&](std::size_t begin, std::size_t end) {
      std::vector<float> yz2(chunk_capacity);
      std::vector<std::uint32_t> near(chunk_capacity);
      RowArgs args;
      args.yz2 = yz2.data();
      args.near = near.data();
      args.nx = swept;
      args.min_r2 = min_r2_;
      args.screen_c = screen_c_;
      const ModelKernels& sweeps = kernels_.models[static_cast<int>(model_)];
      TailArgs tails;
      tails.screen_c = screen_c_;
      tails.y_scale = y_scale_;
      tails.z_scale = z_scale_;
      tails.min_r2 = min_r2_;
      for (std::size_t group = begin; group < end; group += rows_per_group) {
        const std::size_t group_end = std::min(end, group + rows_per_group);
        tails.lanes = 0;
        for (std::size_t row = group; row < group_end; ++row) {
          float* out_row = out + row * static_cast<std::size_t>(nx);
          std::fill(out_row, out_row + nx, 0.0f);
          if (!pack_tails) continue;
          const std::int64_t k = slab.z_begin + static_cast<std::int64_t>(row) / ny;
          const std::int64_t j = static_cast<std::int64_t>(row) % ny;
          for (std::int64_t i = swept; i < nx; ++i, ++tails.lanes) {
            tails.x[tails.lanes] = static_cast<float>(i);
            tails.y[tails.lanes] = static_cast<float>(j);
            tails.z[tails.lanes] = static_cast<float>(k);
            tails.out[tails.lanes] = out_row + i;
          }
        }
        for (const AtomChunk& chunk : chunks_) {
          const ChunkView atoms{ia_.data() + chunk.begin, neg_fx_.data() + chunk.begin,
                                q_.data() + chunk.begin, chunk.count};
          if (swept > 0) {
            for (std::size_t row = group; row < group_end; ++row) {
              const std::int64_t k = slab.z_begin + static_cast<std::int64_t>(row) / ny;
              const std::int64_t j = static_cast<std::int64_t>(row) % ny;
              const double y = static_cast<double>(j) * grid_.spacing[1] / grid_.spacing[0];
              const double z = static_cast<double>(k) * grid_.spacing[2] / grid_.spacing[0];
              args.near_count = kernels_.stage(ay_.data() + chunk.begin, az_.data() + chunk.begin,
                                               chunk.count, y, z, min_r2_, yz2.data(), near.data());
              args.atoms = atoms;
              args.out_row = out + row * static_cast<std::size_t>(nx);
              sweeps.row(args);
            }
          }
          if (pack_tails) {
            tails.atoms = atoms;
            tails.iy = iy_.data() + chunk.begin;
            tails.neg_fy = neg_fy_.data() + chunk.begin;
            tails.iz = iz_.data() + chunk.begin;
            tails.neg_fz = neg_fz_.data() + chunk.begin;
            sweeps.tail(tails);
          }
        }
      }
    });
    timings_.kernels += seconds_since(start);
    const auto stats_start = std::chrono::steady_clock::now();
    // Each plane reduced on its own (backend.hpp's determinism), planes over the pool.
    const std::size_t plane = grid_.plane_points();
    pool_.parallel_for(static_cast<std::size_t>(slab.z_count),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t p = begin; p < end; ++p)
                           plane_stats[p] = cpu_statistics(out + p * plane, plane);
                       });
    timings_.statistics += seconds_since(stats_start);
  }

  void prepare_points(const System& system, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    const double factor = coulomb_factor(physics);  // validates physics
    const PairTerm term = pair_term(physics);
    const std::size_t n = system.atoms.size();
    points_ = PointAtoms{};
    points_.x.resize(n);
    points_.y.resize(n);
    points_.z.resize(n);
    points_.q.resize(n);
    for (std::size_t a = 0; a < n; ++a) {
      const Atom& atom = system.atoms[a];
      points_.x[a] = atom.position[0];
      points_.y[a] = atom.position[1];
      points_.z[a] = atom.position[2];
      points_.q[a] = static_cast<float>(atom.charge * factor) * kernels_.charge_scale;
    }
    points_.chunks = atom_chunks(n);
    points_.model = term.kind;
    points_.screen_c = static_cast<float>(screened_exponent_scale(term.kappa));
    points_.min_r2 =
        std::max(static_cast<float>(physics.min_distance * physics.min_distance), FLT_MIN);
    points_.prepared = true;
    timings_ = {};
    timings_.upload = seconds_since(start);
  }

  /// Blocks of kPointsBlock points over the pool; each block relative to the midpoint of its
  /// points' bounding box (NaN coordinates ignored there: a NaN point spoils only itself).
  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    if (!points_.prepared) throw UsageError("cpu-fast: compute_points() before prepare_points()");
    if (n == 0) return;
    const auto start = std::chrono::steady_clock::now();
    const PointsFn sweep = kernels_.models[static_cast<int>(points_.model)].points;
    const std::size_t blocks = (n + kPointsBlock - 1) / kPointsBlock;
    pool_.parallel_for(blocks, [&](std::size_t begin, std::size_t end) {
      const std::size_t capacity = std::min(points_.x.size(), kAtomsPerChunk);
      std::vector<float> ax(capacity), ay(capacity), az(capacity);
      alignas(64) float px[kPointsBlock], py[kPointsBlock], pz[kPointsBlock], sums[kPointsBlock];
      std::uint32_t skips[kPointsBlock];
      for (std::size_t b = begin; b < end; ++b) {
        const std::size_t first = b * kPointsBlock;
        const std::size_t count = std::min(kPointsBlock, n - first);
        Vec3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
        for (std::size_t i = 0; i < count; ++i)
          for (int axis = 0; axis < 3; ++axis) {
            lo[axis] = std::fmin(lo[axis], points[first + i][axis]);
            hi[axis] = std::fmax(hi[axis], points[first + i][axis]);
          }
        Vec3 centre{};
        for (int axis = 0; axis < 3; ++axis) centre[axis] = 0.5 * (lo[axis] + hi[axis]);
        for (std::size_t i = 0; i < kPointsBlock; ++i) {
          const bool real = i < count;
          px[i] = real ? static_cast<float>(points[first + i][0] - centre[0]) : 0.0f;
          py[i] = real ? static_cast<float>(points[first + i][1] - centre[1]) : 0.0f;
          pz[i] = real ? static_cast<float>(points[first + i][2] - centre[2]) : 0.0f;
          skips[i] = real && skip ? skip[first + i] : kNoAtom;
          sums[i] = 0.0f;
        }
        PointsArgs args;
        args.px = px;
        args.py = py;
        args.pz = pz;
        args.skip = skips;
        args.points = kPointsBlock;
        args.min_r2 = points_.min_r2;
        args.screen_c = points_.screen_c;
        args.out = sums;
        for (const AtomChunk& chunk : points_.chunks) {
          kernels_.centre(points_.x.data() + chunk.begin, points_.y.data() + chunk.begin,
                          points_.z.data() + chunk.begin, chunk.count, centre.data(), ax.data(),
                          ay.data(), az.data());
          args.ax = ax.data();
          args.ay = ay.data();
          args.az = az.data();
          args.q = points_.q.data() + chunk.begin;
          args.count = chunk.count;
          args.first_atom = static_cast<std::uint32_t>(chunk.begin);
          sweep(args);
        }
        std::copy(sums, sums + count, out + first);
      }
    });
    timings_.kernels += seconds_since(start);
  }

  PointsHint points_hint() const override { return {kPointsBlock, 0}; }

  StatsAccum statistics(const float* values, std::size_t n) override {
    const auto start = std::chrono::steady_clock::now();
    const StatsAccum accum =
        serial_reduction_
            ? cpu_statistics(values, n)
            : reduce_in_order<StatsAccum>(n, pool_, [values](std::size_t begin, std::size_t end) {
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
            : reduce_in_order<DiffAccum>(
                  n, pool_, [values, reference](std::size_t begin, std::size_t end) {
                    return cpu_difference(values + begin, reference + begin, end - begin);
                  });
    timings_.statistics += seconds_since(start);
    return accum;
  }

  BackendTimings timings() const override { return timings_; }

 private:
  unsigned threads_;
  ThreadPool pool_;  // started once; every slab and reduction runs on it
  Isa isa_ = Isa::Portable;
  std::string kernel_name_;
  IsaKernels kernels_{};
  std::string reduction_;
  bool serial_reduction_ = false;

  bool prepared_ = false;
  GridSpec grid_;
  std::vector<float> ia_, neg_fx_, q_;            // per atom, input order
  std::vector<double> ay_, az_;                   // relative to the grid origin, in units of hx
  std::vector<float> iy_, neg_fy_, iz_, neg_fz_;  // split y and z, for the row tails
  float y_scale_ = 1.0f, z_scale_ = 1.0f;         // hy / hx, hz / hx
  std::vector<AtomChunk> chunks_;
  float min_r2_ = 0.0f;
  PairKind model_ = PairKind::kCoulomb;
  float screen_c_ = 0.0f;  // -kappa hx log2(e)

  /// What compute_points() needs: the atoms in float64 (each block rounds its offsets once),
  /// the staged charges and the model in Å.
  struct PointAtoms {
    bool prepared = false;
    std::vector<double> x, y, z;
    std::vector<float> q;
    std::vector<AtomChunk> chunks;
    PairKind model = PairKind::kCoulomb;
    float screen_c = 0.0f;  // -kappa log2(e), per Å
    float min_r2 = 0.0f;    // Å^2
  };
  PointAtoms points_;
  BackendTimings timings_;
};

}  // namespace

const FastKernel& find_fast_kernel(std::string_view name) {
  for (const FastKernel& kernel : kFastKernels)
    if (kernel.name == name) return kernel;
  throw UsageError("unknown kernel '" + std::string(name) + "' for the cpu-fast backend");
}

bool isa_supported(Isa isa) noexcept {
  switch (isa) {
    case Isa::Portable: return true;
#if DCS_X86
    case Isa::Avx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512: __builtin_cpu_init(); return __builtin_cpu_supports("avx512f");
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
