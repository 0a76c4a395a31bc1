// A trajectory shared by MPI ranks (trajectory/trajectory_job.hpp): every rank reads the frames
// and adds them to its own planes of the statistics file; rank 0 makes the map. Every step ends
// in io::agree(), so all ranks stop together.
#include <mpi.h>

#include "../trajectory/trajectory_job.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "ranks.hpp"

namespace dcs::pipeline {
namespace {

class RankPlaneSharing final : public PlaneSharing {
 public:
  int rank() const override { return mpi_info().rank; }
  int size() const override { return mpi_info().size; }
  void together(const std::function<void()>& step) override { io::agree_on(MPI_COMM_WORLD, step); }
  std::vector<std::string> gather(const std::string& mine) override {
    return io::all_gather(MPI_COMM_WORLD, mine);
  }
};

}  // namespace

RunResult run_trajectory_on_ranks(const RunConfig& config, Workers& workers,
                                  ProgressSink* progress) {
  RankPlaneSharing ranks;
  return run_trajectory(config, workers, progress, ranks);
}

}  // namespace dcs::pipeline
