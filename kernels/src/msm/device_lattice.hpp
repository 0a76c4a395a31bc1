// The MSM long-range solve on the device: the atoms binned by lattice cell, anterpolated,
// restricted level by level, a lattice sum per level (the cutoff kernel, all pairs on the top
// one) and prolonged back, on the plan the CPU solve uses (dcs/msm_plan.hpp), so the finest
// lattice agrees with the CPU's to double rounding and is the same bits on every run and device.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/msm_plan.hpp"
#include "device_buffer.hpp"
#include "msm_kernels.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Device time of prepare()'s steps, from CUDA events around each launch group.
enum class MsmStep { Binning, Anterpolation, Restriction, LevelSums, Prolongation, Count };

class MsmStepTimer {
 public:
  void begin(MsmStep step, StreamView stream);
  void end(StreamView stream);
  /// Seconds per step (call after the stream has finished the recorded work).
  std::vector<double> seconds() const;

 private:
  struct Mark {
    MsmStep step;
    Event start, stop;
  };
  std::vector<Mark> marks_;
};

/// The finest lattice's long-range potential (e/Å, extent plan.levels[0], x fastest) of the
/// atoms (Å and e, input order, which orders the atoms within a cell) into `finest`; `atoms`
/// is freed as soon as they are sorted by cell. `direct_sums`: every level sum by the
/// one-thread-per-point direct kernel (a testing aid: the tiled kernel must give the same bits).
/// Temporaries are freed before returning. Device memory beyond `atoms` (32 n bytes), with n atoms
/// and L = plan.levels[0].points(): 48 n bytes for the cell sort (sorted copy 32 n, keys and
/// indices 16 n) and 4 L for the cell starts, then (atoms freed) at most about 23 L bytes: charges
/// on every level (8 L 8/7), the potentials of two levels (8 L + L), the prolongation's temporaries
/// (6 L).
void solve_lattice_on_device(const MsmLatticePlan& plan, DeviceBuffer<MsmAtom> atoms,
                             bool direct_sums, DeviceBuffer<double>& finest, StreamView stream,
                             MsmStepTimer& timer);

}  // namespace dcs::cuda::detail
