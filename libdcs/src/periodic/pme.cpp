// Smooth PME's reciprocal part: spreading, FFTW transforms, influence function, interpolation.
#include "dcs/periodic/pme.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>

#include <fftw3.h>
#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/bspline.hpp"

namespace dcs::periodic {
namespace {

/// FFTW's planner is not thread-safe (only fftw_execute is): plans are made and destroyed
/// under this lock.
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

/// Where one point sits on the mesh: the first mesh index per axis (floor of u) and the p
/// weights M_p(t + m) of the indices base - m.
struct Stencil {
  std::array<int, 3> base{};
  std::array<std::array<double, detail::kMaxOrder>, 3> w{};
};

Stencil stencil_of(const UnitCell& cell, const std::array<int, 3>& mesh, int order,
                   const Vec3& r) noexcept {
  const Vec3 s = cell.to_fractional(r);
  Stencil stencil;
  for (int axis = 0; axis < 3; ++axis) {
    double f = s[axis] - std::floor(s[axis]);
    if (!(f < 1.0)) f = 0.0;  // -1e-17 - floor(-1e-17) rounds to 1.0
    const double u = f * double(mesh[axis]);
    int base = int(u);
    if (base >= mesh[axis]) base = mesh[axis] - 1;
    stencil.base[axis] = base;
    detail::bspline_weights(u - double(base), order, stencil.w[axis].data());
  }
  return stencil;
}

/// The mesh indices (base - m) mod K of a stencil along one axis.
std::array<int, detail::kMaxOrder> wrapped_indices(int base, int mesh, int order) noexcept {
  std::array<int, detail::kMaxOrder> index{};
  for (int m = 0; m < order; ++m) index[std::size_t(m)] = (base - m + mesh) % mesh;
  return index;
}

int signed_frequency(int m, int mesh) noexcept { return m < (mesh + 1) / 2 ? m : m - mesh; }

}  // namespace

struct PmeReciprocal::Fft {
  double* real = nullptr;  ///< the charge mesh, then the potential mesh
  fftw_complex* spectrum = nullptr;
  fftw_plan forward = nullptr;
  fftw_plan backward = nullptr;

  Fft(const std::array<int, 3>& mesh) {
    const std::size_t points = std::size_t(mesh[0]) * std::size_t(mesh[1]) * std::size_t(mesh[2]);
    const std::size_t half =
        std::size_t(mesh[0]) * std::size_t(mesh[1]) * std::size_t(mesh[2] / 2 + 1);
    real = fftw_alloc_real(points);
    spectrum = fftw_alloc_complex(half);
    if (real == nullptr || spectrum == nullptr) {
      release();
      throw Error(
          fmt::format("out of memory for the PME mesh {} x {} x {}", mesh[0], mesh[1], mesh[2]));
    }
    std::lock_guard<std::mutex> lock(planner_mutex());
    forward = fftw_plan_dft_r2c_3d(mesh[0], mesh[1], mesh[2], real, spectrum, FFTW_ESTIMATE);
    backward = fftw_plan_dft_c2r_3d(mesh[0], mesh[1], mesh[2], spectrum, real, FFTW_ESTIMATE);
    if (forward == nullptr || backward == nullptr) {
      release_locked();
      throw Error(
          fmt::format("FFTW could not plan the PME mesh {} x {} x {}", mesh[0], mesh[1], mesh[2]));
    }
  }
  ~Fft() { release(); }
  Fft(const Fft&) = delete;
  Fft& operator=(const Fft&) = delete;

  void release() noexcept {
    std::lock_guard<std::mutex> lock(planner_mutex());
    release_locked();
  }
  void release_locked() noexcept {
    if (forward != nullptr) fftw_destroy_plan(forward);
    if (backward != nullptr) fftw_destroy_plan(backward);
    forward = backward = nullptr;
    fftw_free(real);
    fftw_free(spectrum);
    real = nullptr;
    spectrum = nullptr;
  }
};

PmeReciprocal::PmeReciprocal(const UnitCell& cell, double beta, std::array<int, 3> mesh, int order)
    : cell_(cell), mesh_(mesh), order_(order) {
  if (!cell.is_periodic()) throw UsageError("PME needs a periodic cell");
  if (order < 4 || order > detail::kMaxOrder)
    throw UsageError(fmt::format("the PME B-spline order {} is outside 4..8", order));
  for (const int k : mesh)
    if (k < 2 * order)
      throw UsageError(
          fmt::format("a PME mesh of {} points is less than twice the order {}", k, order));
  if (!(beta > 0.0))
    throw UsageError(fmt::format("the Ewald parameter {:g} is not positive", beta));
  fft_ = std::make_unique<Fft>(mesh);

  // θ(m) on the half spectrum m3 = 0..K3/2 that the real-to-complex transform keeps.
  std::array<std::vector<double>, 3> moduli;
  for (int axis = 0; axis < 3; ++axis) moduli[axis] = detail::bspline_moduli(mesh[axis], order);
  const int half3 = mesh[2] / 2 + 1;
  influence_.assign(std::size_t(mesh[0]) * std::size_t(mesh[1]) * std::size_t(half3), 0.0);
  const Mat3& star = cell.reciprocal();
  const double pi = std::numbers::pi;
  const double gauss = pi * pi / (beta * beta);
  const double prefactor = 1.0 / (pi * cell.volume());
  std::size_t index = 0;
  for (int m1 = 0; m1 < mesh[0]; ++m1)
    for (int m2 = 0; m2 < mesh[1]; ++m2)
      for (int m3 = 0; m3 < half3; ++m3, ++index) {
        if (m1 == 0 && m2 == 0 && m3 == 0) continue;
        const double f1 = signed_frequency(m1, mesh[0]), f2 = signed_frequency(m2, mesh[1]);
        const double f3 = signed_frequency(m3, mesh[2]);
        Vec3 k{};
        for (int i = 0; i < 3; ++i) k[i] = f1 * star[0][i] + f2 * star[1][i] + f3 * star[2][i];
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        influence_[index] = prefactor * std::exp(-gauss * k2) / k2 * moduli[0][std::size_t(m1)] *
                            moduli[1][std::size_t(m2)] * moduli[2][std::size_t(m3)];
      }
}

PmeReciprocal::~PmeReciprocal() = default;

void PmeReciprocal::solve(std::span<const Vec3> positions, std::span<const double> charges,
                          unsigned threads) {
  if (positions.size() != charges.size())
    throw UsageError("PME: as many charges as positions are needed");
  const std::size_t atoms = positions.size();
  std::vector<Stencil> stencils(atoms);
  parallel_for(atoms, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      stencils[i] = stencil_of(cell_, mesh_, order_, positions[i]);
  });
  // Atoms bucketed by their first mesh index along a (stable: atom order within a bucket), so
  // each plane k1 is written by one thread, adding its atoms in the same order every run.
  const int k1_size = mesh_[0];
  std::vector<std::size_t> bucket_start(std::size_t(k1_size) + 1, 0);
  for (const Stencil& stencil : stencils) ++bucket_start[std::size_t(stencil.base[0]) + 1];
  for (int k = 0; k < k1_size; ++k)
    bucket_start[std::size_t(k) + 1] += bucket_start[std::size_t(k)];
  std::vector<std::size_t> order(atoms);
  {
    std::vector<std::size_t> next(bucket_start.begin(), bucket_start.end() - 1);
    for (std::size_t i = 0; i < atoms; ++i) order[next[std::size_t(stencils[i].base[0])]++] = i;
  }
  const std::size_t plane = std::size_t(mesh_[1]) * std::size_t(mesh_[2]);
  double* mesh = fft_->real;
  parallel_for(std::size_t(k1_size), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k1 = begin; k1 < end; ++k1) {
      double* out = mesh + k1 * plane;
      std::fill(out, out + plane, 0.0);
      for (int m = 0; m < order_; ++m) {
        const std::size_t bucket = (k1 + std::size_t(m)) % std::size_t(k1_size);
        for (std::size_t slot = bucket_start[bucket]; slot < bucket_start[bucket + 1]; ++slot) {
          const std::size_t atom = order[slot];
          const Stencil& stencil = stencils[atom];
          const double q1 = charges[atom] * stencil.w[0][std::size_t(m)];
          const auto i2 = wrapped_indices(stencil.base[1], mesh_[1], order_);
          const auto i3 = wrapped_indices(stencil.base[2], mesh_[2], order_);
          for (int b = 0; b < order_; ++b) {
            const double q12 = q1 * stencil.w[1][std::size_t(b)];
            double* row = out + std::size_t(i2[std::size_t(b)]) * std::size_t(mesh_[2]);
            for (int c = 0; c < order_; ++c)
              row[i3[std::size_t(c)]] += q12 * stencil.w[2][std::size_t(c)];
          }
        }
      }
    }
  });
  fftw_execute(fft_->forward);
  const std::size_t half_plane = std::size_t(mesh_[1]) * std::size_t(mesh_[2] / 2 + 1);
  fftw_complex* spectrum = fft_->spectrum;
  parallel_for(std::size_t(k1_size), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin * half_plane; i < end * half_plane; ++i) {
      spectrum[i][0] *= influence_[i];
      spectrum[i][1] *= influence_[i];
    }
  });
  // The unnormalised inverse is the convolution Σ_m θ(m) X(m) e^{+2πi m·k/K} itself.
  fftw_execute(fft_->backward);
  solved_ = true;
}

void PmeReciprocal::potential_at(std::span<const Vec3> points, std::span<double> out,
                                 unsigned threads) const {
  if (!solved_) throw InternalError("PmeReciprocal::potential_at() before solve()");
  if (out.size() != points.size()) throw InternalError("PME: output size differs from points");
  const double* mesh = fft_->real;
  parallel_for(points.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Stencil stencil = stencil_of(cell_, mesh_, order_, points[i]);
      const auto i1 = wrapped_indices(stencil.base[0], mesh_[0], order_);
      const auto i2 = wrapped_indices(stencil.base[1], mesh_[1], order_);
      const auto i3 = wrapped_indices(stencil.base[2], mesh_[2], order_);
      double sum = 0.0;
      for (int a = 0; a < order_; ++a) {
        const double* plane_base =
            mesh + std::size_t(i1[std::size_t(a)]) * std::size_t(mesh_[1]) * std::size_t(mesh_[2]);
        double plane_sum = 0.0;
        for (int b = 0; b < order_; ++b) {
          const double* row = plane_base + std::size_t(i2[std::size_t(b)]) * std::size_t(mesh_[2]);
          double row_sum = 0.0;
          for (int c = 0; c < order_; ++c)
            row_sum += stencil.w[2][std::size_t(c)] * row[i3[std::size_t(c)]];
          plane_sum += stencil.w[1][std::size_t(b)] * row_sum;
        }
        sum += stencil.w[0][std::size_t(a)] * plane_sum;
      }
      out[i] = sum;
    }
  });
}

std::span<const double> PmeReciprocal::mesh_potential() const noexcept {
  if (!solved_) return {};
  return {fft_->real, std::size_t(mesh_[0]) * std::size_t(mesh_[1]) * std::size_t(mesh_[2])};
}

}  // namespace dcs::periodic
