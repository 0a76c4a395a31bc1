// dcs_cuda_sanitizer_case: every registry kernel once on a small case, for compute-sanitizer
// (memcheck, racecheck, synccheck) and as a GPU test. Small on purpose (the tools slow kernels
// down 10-100x), but with two constant-memory chunks (2100 atoms), odd grid sizes, a slab that
// does not start at plane 0 and a partial last plane group. Exits 0 when every kernel matches
// the float64 reference within 1e-5 * max|V|, 1 otherwise, 77 (CTest: skipped) without a GPU.
#include <cstdio>
#include <exception>
#include <limits>
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
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dcs_cuda_sanitizer_case: %s\n", error.what());
    return 1;
  }
}
