// Public, plain-C++ face of multilevel summation on a CUDA device (dcs/msm.hpp is the CPU one).
// In a build without CUDA make_msm_cuda_backend() exists and throws.
#pragma once

#include <memory>

#include "dcs/backend.hpp"
#include "dcs/msm.hpp"
#include "dcs/msm_plan.hpp"

namespace dcs::cuda {

/// MSM on device options.device around an exact CUDA backend (make_cuda_backend on the same
/// device): prepare() uploads the atoms once (converted on options.threads threads) and builds
/// the bins and the whole lattice hierarchy on the device (kernels/src/msm/device_lattice.hpp,
/// on the plan the CPU solve uses: dcs/msm_plan.hpp); compute_slab()
/// sums each point's short-range part and interpolates the lattice on the device
/// (kernels/src/msm/). A point's value is the same bits for any slab split and device count
/// (not the CPU backend's bits: float short-range sums). statistics(), difference(),
/// compute_points() and allocate_host() are the wrapped backend's.
std::unique_ptr<PotentialBackend> make_msm_cuda_backend(std::unique_ptr<PotentialBackend> exact,
                                                        const MsmParameters& parameters,
                                                        const BackendOptions& options);

/// The last prepare()'s steps, in seconds: `host` the wall time of the conversion and upload of
/// the atoms (and the plan), the others device time from CUDA events (binning: both sorts, by
/// short-range bin and by lattice cell; level_sums: every level's and the top one's), `total`
/// the wall time of the whole prepare().
struct MsmCudaPrepareTimings {
  double host = 0.0, binning = 0.0, anterpolation = 0.0, restriction = 0.0, level_sums = 0.0,
         prolongation = 0.0, total = 0.0;
  int levels = 0;                     ///< lattice levels
  std::size_t lattice_points = 0;     ///< on all levels
  std::size_t device_peak_bytes = 0;  ///< the estimate stated in the backend's prepare()
};
/// Throws UsageError unless `backend` is a prepared make_msm_cuda_backend() backend.
MsmCudaPrepareTimings msm_cuda_prepare_timings(const PotentialBackend& backend);

/// The finest lattice's long-range potential (e/Å) as the device holds it, downloaded (tests
/// compare it with the CPU solve's, msm_prepare_host). Same preconditions. Testing aid: with
/// DCS_MSM_TESTING_DIRECT_SUMS=1 set at prepare(), every level sum runs the one-thread-per-point
/// direct kernel instead of the tiled one (the two must give the same bits).
MsmLatticeValues msm_cuda_finest_lattice(const PotentialBackend& backend);

}  // namespace dcs::cuda
