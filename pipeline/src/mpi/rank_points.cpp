// The potential at points shared by MPI ranks (points/points_job.hpp): every rank reads the atoms
// and the points, computes its pieces (piece p on rank p % size) on its own workers, and rank 0
// gathers them and writes. Every step ends in io::agree(), so all ranks stop together.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <vector>

#include "../points/points_job.hpp"
#include "dcs/error.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "ranks.hpp"

namespace dcs::pipeline {
namespace {

class RankPointSharing final : public PointSharing {
 public:
  int rank() const override { return mpi_info().rank; }
  int size() const override { return mpi_info().size; }
  void together(const std::function<void()>& step) override { io::agree_on(MPI_COMM_WORLD, step); }

  PointsShape combine(const PointsShape& local) override {
    const unsigned long long mine[3] = {local.block, local.min_points, local.workers};
    std::vector<unsigned long long> all(3 * static_cast<std::size_t>(size()));
    MPI_Allgather(mine, 3, MPI_UNSIGNED_LONG_LONG, all.data(), 3, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    PointsShape shape{1, 0, 0};
    for (std::size_t r = 0; r < all.size(); r += 3) {
      shape.block = std::lcm(shape.block, static_cast<std::size_t>(all[r]));
      shape.min_points = std::max(shape.min_points, static_cast<std::size_t>(all[r + 1]));
      shape.workers += static_cast<std::size_t>(all[r + 2]);
    }
    return shape;
  }

  /// Each rank sends its pieces packed in order; rank 0 puts every rank's back in place.
  void gather(std::vector<float>& values, std::size_t piece) override {
    const std::size_t n = values.size();
    const auto ranks = static_cast<std::size_t>(size());
    auto pieces_of = [&](std::size_t r) {
      std::vector<std::size_t> list;
      for (std::size_t p = r; p * piece < n; p += ranks) list.push_back(p);
      return list;
    };
    auto count_of = [&](std::size_t r) {
      std::size_t count = 0;
      for (std::size_t p : pieces_of(r)) count += std::min(piece, n - p * piece);
      return count;
    };
    std::vector<float> packed;
    for (std::size_t p : pieces_of(static_cast<std::size_t>(rank())))
      packed.insert(packed.end(), values.begin() + static_cast<std::ptrdiff_t>(p * piece),
                    values.begin() + static_cast<std::ptrdiff_t>(std::min(n, (p + 1) * piece)));
    if (n > static_cast<std::size_t>(INT_MAX))
      throw UsageError("a points run over MPI ranks takes at most 2^31 - 1 points");
    std::vector<int> counts(ranks), offsets(ranks);
    std::vector<float> all;
    if (rank() == 0) {
      int offset = 0;
      for (std::size_t r = 0; r < ranks; ++r) {
        counts[r] = static_cast<int>(count_of(r));
        offsets[r] = offset;
        offset += counts[r];
      }
      all.resize(n);
    }
    MPI_Gatherv(packed.data(), static_cast<int>(packed.size()), MPI_FLOAT, all.data(),
                counts.data(), offsets.data(), MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (rank() != 0) return;
    std::size_t at = 0;
    for (std::size_t r = 0; r < ranks; ++r)
      for (std::size_t p : pieces_of(r)) {
        const std::size_t count = std::min(piece, n - p * piece);
        std::copy(all.begin() + static_cast<std::ptrdiff_t>(at),
                  all.begin() + static_cast<std::ptrdiff_t>(at + count),
                  values.begin() + static_cast<std::ptrdiff_t>(p * piece));
        at += count;
      }
  }
};

}  // namespace

RunResult run_points_on_ranks(const RunConfig& config, Workers& workers, ProgressSink* progress) {
  RankPointSharing ranks;
  return run_points(config, workers, progress, ranks);
}

}  // namespace dcs::pipeline
