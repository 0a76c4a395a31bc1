// Ranks sharing one map: the parallel HDF5 store (dcs/io/parallel_store.hpp).
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/parallel_store.hpp"
#include "hdf5_support.hpp"

#ifndef H5_HAVE_PARALLEL
#error "the parallel store needs the parallel (MPI) build of HDF5 (Debian: libhdf5-openmpi-dev)"
#endif

namespace dcs::io {

using h5::Failure;
using h5::Handle;
using h5::QuietErrors;

namespace {

constexpr std::size_t kStatFields = h5::kPlaneStatFields;

}  // namespace

struct ParallelStore::Impl {
  Impl(const std::string& file_path, const GridSpec& map_grid, MPI_Comm world, double seconds)
      : path(file_path), grid(map_grid), checkpoint_seconds(seconds), failure(file_path, false) {
    MPI_Comm_dup(world, &comm);
    MPI_Comm_rank(comm, &rank);
  }
  ~Impl() {
    {
      const QuietErrors quiet;
      stats_set = Handle();
      done_set = Handle();
      potential = Handle();
      collective = Handle();
      file = Handle();
    }
    MPI_Comm_free(&comm);
  }

  std::string path;
  GridSpec grid;
  double checkpoint_seconds;
  Failure failure;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;

  Handle file, potential, done_set, stats_set, collective;
  std::vector<std::uint8_t> done;
  std::vector<StatsAccum> stats;
  std::vector<std::int64_t> pending;  // this rank's planes written since the last checkpoint
  std::chrono::steady_clock::time_point last_checkpoint = std::chrono::steady_clock::now();
  std::int64_t planes_written = 0;  // by every rank (rank 0 reports it)
  std::function<void(std::int64_t)> progress;
  bool closed = false;
  bool settled = false;  // a round ended in a failure every rank knows of

  void open() {
    const QuietErrors quiet;
    h5::prepare_library();
    const Handle fapl(failure.id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
    failure.status(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    failure.status(H5Pset_all_coll_metadata_ops(fapl.get(), true), "H5Pset_all_coll_metadata_ops");
    failure.status(H5Pset_coll_metadata_write(fapl.get(), true), "H5Pset_coll_metadata_write");
    file = Handle(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "H5Fopen (MPI-IO)"),
                  H5Fclose);
    potential =
        Handle(failure.id(H5Dopen2(file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
               H5Dclose);
    done_set = Handle(failure.id(H5Dopen2(file.get(), "/resume/plane_done", H5P_DEFAULT),
                                 "H5Dopen2(/resume/plane_done)"),
                      H5Dclose);
    stats_set = Handle(failure.id(H5Dopen2(file.get(), "/resume/plane_stats", H5P_DEFAULT),
                                  "H5Dopen2(/resume/plane_stats)"),
                       H5Dclose);
    collective = Handle(failure.id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"), H5Pclose);
    failure.status(H5Pset_dxpl_mpio(collective.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");

    const Handle space(failure.id(H5Dget_space(potential.get()), "H5Dget_space"), H5Sclose);
    std::array<hsize_t, 3> dims{};
    if (H5Sget_simple_extent_ndims(space.get()) != 3 ||
        H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) != 3 ||
        dims != std::array<hsize_t, 3>{static_cast<hsize_t>(grid.nz()),
                                       static_cast<hsize_t>(grid.ny()),
                                       static_cast<hsize_t>(grid.nx())})
      failure.invalid("/potential does not have the grid's dimensions");

    const auto nz = static_cast<std::size_t>(grid.nz());
    done.assign(nz, 0);
    stats.assign(nz, StatsAccum{});
    failure.status(
        H5Dread(done_set.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, collective.get(), done.data()),
        "H5Dread(/resume/plane_done)");
    std::vector<double> rows(nz * kStatFields);
    failure.status(H5Dread(stats_set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, collective.get(),
                           rows.data()),
                   "H5Dread(/resume/plane_stats)");
    for (std::size_t z = 0; z < nz; ++z) {
      if (done[z] > 1) failure.invalid("/resume/plane_done holds values other than 0 and 1");
      if (done[z] == 0) continue;
      stats[z] = h5::plane_stats_from_row(rows.data() + z * kStatFields);
    }
  }

  /// A selection of rows [first, first + count) of a dataset whose other dimensions are whole.
  Handle rows_of(const Handle& set, std::int64_t first, std::int64_t count) const {
    Handle space(failure.id(H5Dget_space(set.get()), "H5Dget_space"), H5Sclose);
    if (count == 0) {
      failure.status(H5Sselect_none(space.get()), "H5Sselect_none");
      return space;
    }
    std::array<hsize_t, 3> dims{};
    const int rank_dims = H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    std::array<hsize_t, 3> start{static_cast<hsize_t>(first), 0, 0};
    std::array<hsize_t, 3> extent{static_cast<hsize_t>(count), dims[1], dims[2]};
    if (rank_dims < 3) extent[2] = 1;
    if (rank_dims < 2) extent[1] = 1;
    failure.status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                       extent.data(), nullptr),
                   "H5Sselect_hyperslab");
    return space;
  }

  Handle memory(std::size_t elements) const {
    const hsize_t n = std::max<hsize_t>(1, elements);
    Handle space(failure.id(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"), H5Sclose);
    if (elements == 0) failure.status(H5Sselect_none(space.get()), "H5Sselect_none");
    return space;
  }

  /// One round (see the header). Returns false when no rank had data (nothing was written).
  bool round(const Slab* slab, const float* values, const StatsAccum* plane_stats,
             const std::exception_ptr& local) {
    const RankOutcome outcome = classify(local);
    const bool due =
        rank == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() >=
            checkpoint_seconds;
    std::array<std::int64_t, 4> in{outcome.state == 2 ? rank : kNoRank,
                                   outcome.state == 1 ? rank : kNoRank, slab != nullptr ? -1 : 0,
                                   due ? -1 : 0};
    std::array<std::int64_t, 4> out{};
    MPI_Allreduce(in.data(), out.data(), 4, MPI_INT64_T, MPI_MIN, comm);
    settled = out[0] != kNoRank || out[1] != kNoRank;
    settle(comm, rank, local, out[0], out[1]);
    if (out[2] == 0) return false;

    const QuietErrors quiet;
    const std::int64_t first = slab != nullptr ? slab->z_begin : 0;
    const std::int64_t count = slab != nullptr ? slab->z_count : 0;
    const std::size_t plane = grid.plane_points();
    const float dummy_value = 0.0f;
    {
      const Handle file_space = rows_of(potential, first, count);
      const Handle memory_space = memory(static_cast<std::size_t>(count) * plane);
      failure.status(
          H5Dwrite(potential.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                   collective.get(), count > 0 ? values : &dummy_value),
          fmt::format("H5Dwrite(potential, collective, planes {}-{})", first, first + count - 1));
    }
    std::vector<double> rows(static_cast<std::size_t>(count) * kStatFields);
    for (std::int64_t p = 0; p < count; ++p) {
      const h5::PlaneStatsRow row = h5::plane_stats_row(plane_stats[p]);
      std::copy(row.begin(), row.end(),
                rows.begin() + static_cast<std::ptrdiff_t>(p * kStatFields));
      stats[static_cast<std::size_t>(first + p)] = plane_stats[p];
      pending.push_back(first + p);
    }
    {
      const double dummy = 0.0;
      const Handle file_space = rows_of(stats_set, first, count);
      const Handle memory_space = memory(rows.size());
      failure.status(
          H5Dwrite(stats_set.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(),
                   collective.get(), rows.empty() ? &dummy : rows.data()),
          "H5Dwrite(/resume/plane_stats, collective)");
    }
    std::int64_t planes = count;
    MPI_Allreduce(MPI_IN_PLACE, &planes, 1, MPI_INT64_T, MPI_SUM, comm);
    planes_written += planes;
    if (rank == 0 && progress) progress(planes_written);
    if (out[3] != 0) checkpoint_now();
    return true;
  }

  /// Collective: data and statistics to stable storage, then the flags of the planes written
  /// since the last checkpoint.
  void checkpoint_now() {
    const QuietErrors quiet;
    failure.status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "H5Fflush (MPI_File_sync)");
    std::sort(pending.begin(), pending.end());
    const Handle file_space(failure.id(H5Dget_space(done_set.get()), "H5Dget_space"), H5Sclose);
    failure.status(H5Sselect_none(file_space.get()), "H5Sselect_none");
    for (std::size_t begin = 0; begin < pending.size();) {
      std::size_t end = begin + 1;
      while (end < pending.size() && pending[end] == pending[end - 1] + 1) ++end;
      const hsize_t start = static_cast<hsize_t>(pending[begin]);
      const hsize_t count = end - begin;
      failure.status(
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, &start, nullptr, &count, nullptr),
          "H5Sselect_hyperslab");
      begin = end;
    }
    const std::vector<std::uint8_t> ones(std::max<std::size_t>(1, pending.size()), 1);
    const Handle memory_space = memory(pending.size());
    failure.status(H5Dwrite(done_set.get(), H5T_NATIVE_UINT8, memory_space.get(), file_space.get(),
                            collective.get(), ones.data()),
                   "H5Dwrite(/resume/plane_done, collective)");
    for (const std::int64_t z : pending) done[static_cast<std::size_t>(z)] = 1;
    pending.clear();
    last_checkpoint = std::chrono::steady_clock::now();
  }
};

ParallelStore::ParallelStore(const std::string& path, const GridSpec& grid, MPI_Comm comm,
                             double checkpoint_seconds)
    : impl_(std::make_unique<Impl>(path, grid, comm, checkpoint_seconds)) {
  impl_->open();
}

ParallelStore::~ParallelStore() = default;

const std::vector<std::uint8_t>& ParallelStore::plane_done() const noexcept { return impl_->done; }
const std::vector<StatsAccum>& ParallelStore::plane_stats() const noexcept { return impl_->stats; }

void ParallelStore::write_slab(const Slab& slab, const float* values,
                               const StatsAccum* plane_stats) {
  std::exception_ptr local;
  for (std::int64_t p = 0; p < slab.z_count && !local; ++p)
    if (plane_stats[p].nonfinite > 0)
      local = std::make_exception_ptr(IoError(fmt::format(
          "{} of the values of plane {} are not finite (a bug: the distance clamp should prevent "
          "this); nothing was written",
          plane_stats[p].nonfinite, slab.z_begin + p)));
  impl_->round(&slab, values, plane_stats, local);
}

void ParallelStore::finish_writes() {
  while (impl_->round(nullptr, nullptr, nullptr, nullptr)) {
  }
  impl_->checkpoint_now();
}

void ParallelStore::read_planes(const Slab& /*slab*/, float* /*out*/) {
  throw InternalError("planes are read back through MapStore after the ranks finish");
}

void ParallelStore::announce(std::exception_ptr error) {
  try {
    impl_->round(nullptr, nullptr, nullptr, error);
  } catch (...) {
    // Every rank now knows; the caller rethrows its own error.
  }
}

bool ParallelStore::settled() const noexcept { return impl_->settled; }

void ParallelStore::on_progress(std::function<void(std::int64_t)> callback) {
  impl_->progress = std::move(callback);
}

void ParallelStore::close() {
  Impl& s = *impl_;
  if (s.closed) return;
  s.closed = true;
  const QuietErrors quiet;
  s.stats_set.close(s.failure, "H5Dclose(plane_stats)");
  s.done_set.close(s.failure, "H5Dclose(plane_done)");
  s.potential.close(s.failure, "H5Dclose(potential)");
  s.collective = Handle();
  s.file.close(s.failure, "H5Fclose (MPI-IO)");
}

}  // namespace dcs::io
