// Public, plain-C++ face of the periodic (Ewald) method on a CUDA device
// (dcs/periodic/ewald_backend.hpp is the CPU one). In a build without CUDA
// make_ewald_cuda_backend() exists and throws.
#pragma once

#include <cstddef>
#include <memory>

#include "dcs/backend.hpp"
#include "dcs/periodic/ewald_parameters.hpp"

namespace dcs::cuda {

/// The periodic potential on device options.device around an exact CUDA backend (its reductions,
/// hints, host buffers and names are used). prepare() uploads the atoms, bins the images of the
/// atoms near the map on the device and solves smooth PME with cuFFT (the CPU backend's
/// parameters: choose_ewald_parameters(cell, settings)); compute_slab() sums each point's real
/// space (float, fixed order) and interpolates the mesh (double); prepare_points() and
/// compute_points() do the same at points and atoms (own term excluded, self term added).
/// reference_points() is the CPU's float64 Ewald oracle (periodic::ewald_reference_points). A
/// point's value is the same bits for any slab split and device count (not the CPU backend's
/// bits: float real-space sums). Testing aid: DCS_EWALD_TESTING_BIN_SIDE="f" sets the bins'
/// side to f × the cutoff (default 0.5), for benchmarks of the tiles' pruning.
std::unique_ptr<PotentialBackend> make_ewald_cuda_backend(
    std::unique_ptr<PotentialBackend> exact, const periodic::PeriodicSettings& settings,
    const BackendOptions& options);

/// The last prepare()'s (or prepare_points()'s) steps in seconds: `host` the wall time of the
/// atoms' conversion and upload, `binning` and `pme` device time from CUDA events (the images
/// counted, written, sorted and their bins found; the spreading, both FFTs and the influence
/// function), `total` the wall time of the whole prepare; `images` the binned images, `mesh` the
/// PME mesh points.
struct EwaldCudaPrepareTimings {
  double host = 0.0, binning = 0.0, pme = 0.0, total = 0.0;
  std::size_t images = 0, mesh = 0;
};
/// Throws UsageError unless `backend` is a prepared make_ewald_cuda_backend() backend.
EwaldCudaPrepareTimings ewald_cuda_prepare_timings(const PotentialBackend& backend);

}  // namespace dcs::cuda
