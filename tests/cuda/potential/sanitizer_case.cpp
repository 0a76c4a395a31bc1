// dcs_cuda_sanitizer_case: every registry kernel once on a small case, for compute-sanitizer
// (memcheck, racecheck, synccheck) and as a GPU test. Small on purpose (the tools slow kernels
// down 10-100x), but with two constant-memory chunks (2100 atoms), odd grid sizes, a slab that
// does not start at plane 0 and a partial last plane group. Exits 0 when every kernel matches
// the float64 reference within 1e-5 * max|V|, 1 otherwise, 77 (CTest: skipped) without a GPU.
// Then the default kernel and compute_points (with skipped atoms) under each physics model.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "test_systems.hpp"

int main() {
  using namespace dcs;
  if (!cuda::cuda_available()) {
    std::printf("skipped: %s\n", cuda::cuda_unavailable_reason().c_str());
    return 77;
  }
  try {
    const GridSpec grid = test::make_spec(19, 7, 13, {-4.5, -1.5, -3.0}, {0.5, 0.5, 0.5});
    const System system = test::random_atoms(2100, {0.0, 0.0, 0.0}, 30.0, 2100);
    const Physics physics;
    const Slab slab{2, 10};
    const std::vector<Vec3> points = test::slab_points(grid, slab);
    std::vector<double> reference(points.size());
    reference_potential(system, physics, points.data(), points.size(), reference.data());

    int failures = 0;
    for (const VariantInfo& variant : cuda::cuda_kernel_variants()) {
      BackendOptions options;
      options.kernel = variant.name;
      options.debug_sync = true;
      const auto backend = cuda::make_cuda_backend(options);
      backend->prepare(system, grid, physics);
      std::vector<float> out(points.size(), std::numeric_limits<float>::quiet_NaN());
      backend->compute(slab, out.data());
      const test::Comparison result = test::compare(out, reference);
      const bool ok = result.nonfinite == 0 &&
                      result.max_abs_error <= test::kRelativeTolerance * result.max_abs_reference;
      std::printf("%-16s %s  max|err|/max|V| = %.2e, unwritten %zu\n", variant.name.c_str(),
                  ok ? "ok  " : "FAIL", result.relative(), result.nonfinite);
      if (!ok) ++failures;
    }
    // The physics models: the production kernel's grid and the points kernel (every 3rd point
    // skips an atom) against the float64 reference backend.
    Physics screened;
    screened.ionic_strength = 0.15;
    screened.dielectric = 78.54;
    Physics distance;
    distance.dielectric_model = DielectricModel::kDistance;
    distance.dielectric = 4.0;
    const std::vector<std::pair<const char*, Physics>> models = {
        {"coulomb", physics}, {"debye-hueckel", screened}, {"eps = 4r", distance}};
    std::vector<std::uint32_t> skip(points.size(), kNoAtom);
    for (std::size_t i = 0; i < skip.size(); i += 3) skip[i] = static_cast<std::uint32_t>(i % 2100);
    BackendOptions options;
    options.debug_sync = true;
    const auto backend = cuda::make_cuda_backend(options);
    const auto oracle = make_cpu_reference_backend(BackendOptions{});
    for (const auto& [label, model] : models) {
      std::vector<double> grid_reference(points.size());
      reference_potential(system, model, points.data(), points.size(), grid_reference.data());
      backend->prepare(system, grid, model);
      std::vector<float> out(points.size(), std::numeric_limits<float>::quiet_NaN());
      backend->compute(slab, out.data());
      std::vector<float> at(points.size(), std::numeric_limits<float>::quiet_NaN());
      backend->prepare_points(system, model);
      backend->compute_points(points.data(), skip.data(), points.size(), at.data());
      std::vector<float> want(points.size());
      oracle->prepare_points(system, model);
      oracle->compute_points(points.data(), skip.data(), points.size(), want.data());
      const std::vector<double> want64(want.begin(), want.end());
      auto check = [&, label = label](const char* what, const std::vector<float>& got,
                                      const std::vector<double>& ref) {
        const test::Comparison result = test::compare(got, ref);
        const bool ok = result.nonfinite == 0 &&
                        result.max_abs_error <= test::kRelativeTolerance * result.max_abs_reference;
        std::printf("%-8s %-14s %s  max|err|/max|V| = %.2e, unwritten %zu\n", what, label,
                    ok ? "ok  " : "FAIL", result.relative(), result.nonfinite);
        if (!ok) ++failures;
      };
      check("grid", out, grid_reference);
      check("points", at, want64);
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dcs_cuda_sanitizer_case: %s\n", error.what());
    return 1;
  }
}
