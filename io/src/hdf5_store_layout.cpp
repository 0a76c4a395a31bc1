// The resumable map store's layout in its file (map_store_impl.hpp): creating /potential,
// /atoms and /resume, opening a partial file to continue it, and the chunk and /resume
// addresses that values and flags are written at.
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "fd_io.hpp"
#include "map_store_impl.hpp"

namespace dcs::io {

void MapStore::Impl::build(const MapMetadata& meta, const System& system, const ResumeKey& key,
                           bool defer_atoms) {
  Impl& s = *this;
  const std::string& partial_path = path;
  // Each step's time goes to the debug log: creation takes ~3 ms on a local ext4 disk, and a
  // slow one elsewhere should show which step it is.
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  std::string steps;
  const auto step = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    steps += fmt::format("{}{} {:.1f} ms", steps.empty() ? "" : ", ", name,
                         std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  };
  const QuietErrors quiet;
  const Writer w(failure);
  const Handle fapl = h5::store_access_plist(failure);
  if (s.gzip_level == 0)  // the 1.10 format's fixed-array chunk index: allocating and looking up
                          // 10^5 chunks takes milliseconds, not the v1 B-tree's minutes
    failure.status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110),
                   "H5Pset_libver_bounds");
  // Truncates the locked file in place (same inode, so the lock stays on it).
  s.file =
      Handle(failure.id(H5Fcreate(partial_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                        "H5Fcreate"),
             H5Fclose);
  s.lock.check_same_file();
  const hid_t root = s.file.get();
  w.text(root, "format", "dcs potential map");
  const std::int64_t format_version = h5::kFormatVersion;
  w.int64s(root, "format_version", &format_version, 1);
  w.text(root, "program", meta.provenance.program);

  const std::array<hsize_t, 3> dims{static_cast<hsize_t>(grid.nz()),
                                    static_cast<hsize_t>(grid.ny()),
                                    static_cast<hsize_t>(grid.nx())};
  const std::array<hsize_t, 3> chunk_dims{static_cast<hsize_t>(s.chunk[0]),
                                          static_cast<hsize_t>(s.chunk[1]),
                                          static_cast<hsize_t>(s.chunk[2])};
  Handle dcpl(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_chunk(dcpl.get(), 3, chunk_dims.data()), "H5Pset_chunk");
  failure.status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  if (s.gzip_level > 0) {
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      failure.invalid("this HDF5 library has no deflate (gzip) filter");
    failure.status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
    failure.status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(s.gzip_level)),
                   "H5Pset_deflate");
  } else {
    failure.status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  }
  const Handle space = w.space({dims[0], dims[1], dims[2]});
  s.dataset = Handle(failure.id(H5Dcreate2(root, "potential", H5T_IEEE_F32LE, space.get(),
                                           H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                "H5Dcreate2(potential)"),
                     H5Dclose);
  h5::write_potential_attributes(s.dataset.get(), meta, w);
  step("layout");
  if (defer_atoms) {
    s.deferred_atoms = &system;
  } else {
    h5::write_atoms(root, system, w);
    step("atoms");
  }

  const Handle resume = create_resume(root, key, w);
  step("resume datasets");
  failure.status(H5Fflush(root, H5F_SCOPE_LOCAL), "H5Fflush");
  step("flush");
  s.read_resume_addresses();
  if (s.gzip_level == 0) {
    s.read_chunk_addresses();
    step("chunk addresses");
    s.close_hdf5();
    step("close");
  }
  s.open_fd();
  if (s.gzip_level == 0) s.open_direct();
  s.done.assign(static_cast<std::size_t>(grid.nz()), 0);
  s.stats.assign(static_cast<std::size_t>(grid.nz()), StatsAccum{});
  step("descriptor");
  log().debug("{} created in {:.1f} ms ({}); {}", partial_path,
              std::chrono::duration<double, std::milli>(last - start).count(), steps,
              s.writes ? fmt::format("{} writer{}{}", s.writes->writers(),
                                     s.writes->writers() == 1 ? "" : "s",
                                     s.direct && s.direct->active() ? ", direct" : "")
                       : std::string("one writer (compressed)"));
}

/// /resume: flags and plane statistics in contiguous storage allocated now, zero-filled, so
/// that their bytes can be updated in place without touching HDF5's metadata.
Handle MapStore::Impl::create_resume(hid_t root, const ResumeKey& key, const Writer& w) {
  Handle resume = w.group(root, "resume");
  w.text(resume.get(), "input_sha256", key.input_sha256);
  w.text(resume.get(), "settings", settings_text(key));
  w.int64s(resume.get(), "chunk_depth", &chunk[0], 1);
  w.text(resume.get(), "description",
         "Partial map: plane_done[k] = 1 once plane k of /potential and plane_stats[k] (min, "
         "max, sum, sum of squares, count, non-finite count) are on stable storage.");
  Handle flat(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_layout(flat.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  failure.status(H5Pset_alloc_time(flat.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  failure.status(H5Pset_fill_time(flat.get(), H5D_FILL_TIME_ALLOC), "H5Pset_fill_time");
  {
    const Handle done_space = w.space({static_cast<hsize_t>(grid.nz())});
    const Handle done_set(
        failure.id(H5Dcreate2(resume.get(), "plane_done", H5T_STD_U8LE, done_space.get(),
                              H5P_DEFAULT, flat.get(), H5P_DEFAULT),
                   "H5Dcreate2(plane_done)"),
        H5Dclose);
    const Handle stats_space = w.space({static_cast<hsize_t>(grid.nz()), kStatFields});
    const Handle stats_set(
        failure.id(H5Dcreate2(resume.get(), "plane_stats", H5T_IEEE_F64LE, stats_space.get(),
                              H5P_DEFAULT, flat.get(), H5P_DEFAULT),
                   "H5Dcreate2(plane_stats)"),
        H5Dclose);
  }
  return resume;
}

void MapStore::Impl::open_existing(const MapMetadata& meta, const ResumeKey& key,
                                   unsigned n_threads, bool verify) {
  Impl& s = *this;
  const std::string& partial_path = lock.path();
  s.path = partial_path;
  s.grid = meta.grid;
  s.threads = store_threads(n_threads);
  s.failure = Failure(partial_path, /*reading=*/true);
  const QuietErrors quiet;
  const Handle fapl = h5::store_access_plist(failure);
  s.file = Handle(failure.id(H5Fopen(partial_path.c_str(), H5F_ACC_RDWR, fapl.get()),
                             "H5Fopen (the partial file is damaged)"),
                  H5Fclose);
  s.lock.check_same_file();
  // A kill -9 inside a checkpoint's H5Fflush can leave chunk-index nodes on disk that name
  // chunks written after the end of allocation the superblock (written last) records: HDF5
  // then refuses to rewrite them ("addr overflow"), on every resume. Every byte on disk was
  // allocated by the killed run, so the allocation extends to the file's end; new chunks go
  // after it. A torn index is caught below (check_chunk_index()).
  failure.status(H5Fincrement_filesize(s.file.get(), 0), "H5Fincrement_filesize");
  const Handle resume(failure.id(H5Gopen2(s.file.get(), "resume", H5P_DEFAULT), "H5Gopen2(resume)"),
                      H5Gclose);

  h5::check_resume_key(resume.get(), key, failure);
  // A run stopped before it wrote its deferred atoms left no done plane: start afresh.
  if (H5Lexists(s.file.get(), "atoms", H5P_DEFAULT) <= 0)
    throw UnusablePartial(partial_path, 0, "holds no atoms (its run stopped before any slab)");

  s.dataset =
      Handle(failure.id(H5Dopen2(s.file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
             H5Dclose);
  const Handle plist(failure.id(H5Dget_create_plist(s.dataset.get()), "H5Dget_create_plist"),
                     H5Pclose);
  std::array<hsize_t, 3> stored_chunk{};
  if (H5Pget_chunk(plist.get(), 3, stored_chunk.data()) != 3)
    failure.invalid("/potential is not chunked");
  s.set_chunk_geometry(static_cast<std::int64_t>(stored_chunk[0]));
  if (s.chunk[1] != static_cast<std::int64_t>(stored_chunk[1]) ||
      s.chunk[2] != static_cast<std::int64_t>(stored_chunk[2]))
    failure.invalid("/potential has an unexpected chunk shape");
  const int filters = H5Pget_nfilters(plist.get());
  if (filters < 0) failure.raise("H5Pget_nfilters");
  s.gzip_level = 0;
  for (int f = 0; f < filters; ++f) {
    unsigned flags = 0, values[4] = {};
    std::size_t n_values = 4;
    const H5Z_filter_t id = H5Pget_filter2(plist.get(), static_cast<unsigned>(f), &flags, &n_values,
                                           values, 0, nullptr, nullptr);
    if (id == H5Z_FILTER_DEFLATE) s.gzip_level = n_values > 0 ? static_cast<int>(values[0]) : 6;
  }
  if (s.gzip_level > 0) s.check_chunk_index();
  s.failure = Failure(partial_path, /*reading=*/false);
  s.read_resume_addresses();
  if (s.gzip_level == 0) s.read_chunk_addresses();
  s.open_fd();
  if (s.gzip_level == 0) s.open_direct();
  s.load_resume_state();
  if (verify) s.verify_done_planes();
  if (s.gzip_level == 0) s.close_hdf5();
}

/// The compressed map's chunk index, read whole: a kill inside a checkpoint's flush may have
/// written some of its nodes and not others (a split node without its new sibling, say). Such
/// a file cannot be continued, or repaired in place: the run starts afresh.
void MapStore::Impl::check_chunk_index() {
  const Handle space(failure.id(H5Dget_space(dataset.get()), "H5Dget_space"), H5Sclose);
  hsize_t count = 0;
  if (H5Dget_num_chunks(dataset.get(), space.get(), &count) < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw UnusablePartial(path, 0,
                          "has a damaged chunk index (its run was killed while it wrote a "
                          "checkpoint)");
  }
}

void MapStore::Impl::ensure_open() {
  if (file.get() >= 0) return;
  const QuietErrors quiet;
  lock.check_same_file();  // HDF5 opens by name: make sure the name is still ours
  const Handle fapl = h5::store_access_plist(failure);
  file = Handle(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "H5Fopen"), H5Fclose);
  dataset =
      Handle(failure.id(H5Dopen2(file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
             H5Dclose);
}

void MapStore::Impl::close_hdf5() {
  const QuietErrors quiet;
  dataset.close(failure, "H5Dclose(potential)");
  file.close(failure, "H5Fclose");
}

/// /atoms, if create() left them for later: through HDF5 (opened for it and closed again
/// where values stream in by pwrite). Their space comes after everything create() allocated,
/// so no chunk or /resume address moves. A partial file without /atoms is never resumed
/// (open_existing()), so a run stopped before this point starts afresh.
void MapStore::Impl::write_deferred_atoms() {
  if (deferred_atoms == nullptr) return;
  const auto start = std::chrono::steady_clock::now();
  const bool was_closed = file.get() < 0;
  ensure_open();
  const QuietErrors quiet;
  const Writer w(failure);
  h5::write_atoms(file.get(), *deferred_atoms, w);
  failure.status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush");
  if (was_closed) close_hdf5();
  log().debug(
      "{}: {} atoms written in {:.1f} ms, while the first slab computed", path,
      deferred_atoms->size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  deferred_atoms = nullptr;
}

void MapStore::Impl::open_fd() {
  fd = ::fcntl(lock.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
}

void MapStore::Impl::open_direct() {
  if (chunk_address.empty()) return;
  const auto [low, high] = std::minmax_element(chunk_address.begin(), chunk_address.end());
  direct = std::make_unique<DirectWrites>(fd, *low, *high + chunk_floats() * sizeof(float), path);
}

void MapStore::Impl::set_chunk_geometry(std::int64_t depth) {
  chunk = {std::clamp<std::int64_t>(depth, 1, grid.nz()), std::min(kChunkEdge, grid.ny()),
           std::min(kChunkEdge, grid.nx())};
  chunks = {(grid.nz() + chunk[0] - 1) / chunk[0], (grid.ny() + chunk[1] - 1) / chunk[1],
            (grid.nx() + chunk[2] - 1) / chunk[2]};
}

haddr_t MapStore::Impl::chunk_address_at(std::int64_t zc, std::int64_t yc, std::int64_t xc) const {
  const std::array<hsize_t, 3> offset{static_cast<hsize_t>(zc * chunk[0]),
                                      static_cast<hsize_t>(yc * chunk[1]),
                                      static_cast<hsize_t>(xc * chunk[2])};
  unsigned filter_mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  failure.status(
      H5Dget_chunk_info_by_coord(dataset.get(), offset.data(), &filter_mask, &address, &size),
      "H5Dget_chunk_info_by_coord");
  if (address == HADDR_UNDEF || size != chunk_floats() * sizeof(float))
    failure.invalid("a chunk of /potential is not allocated");
  return address;
}

void MapStore::Impl::read_chunk_addresses() {
  chunk_address.assign(static_cast<std::size_t>(chunks[0] * chunks[1] * chunks[2]), HADDR_UNDEF);
  // Early allocation with the fixed-array index lays the chunks out in index order, back to
  // back: check that on a few chunks (the first two, both ends of the first row, the middle,
  // the last) and compute the others. HDF5 1.10 finds a chunk's address by iterating over all
  // chunks: at 1700^3 (78,003 chunks) a lookup takes ~3 ms, and the ~1,000 lookups of a
  // larger sample took 0.9 s of the store's creation.
  const haddr_t first = chunk_address_at(0, 0, 0);
  const std::uint64_t bytes = chunk_floats() * sizeof(float);
  const std::size_t total = chunk_address.size();
  const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
  const std::size_t sample[] = {1, per_row - 1, per_row, total / 2, total - 1};
  bool regular = true;
  for (const std::size_t index : sample) {
    if (index >= total) continue;
    const auto [zc, yc, xc] = chunk_of_job(0, index);
    regular = regular && chunk_address_at(zc, yc, xc) == first + index * bytes;
  }
  rows_contiguous = regular;
  if (!writes) writes = std::make_unique<ParallelWrites>(writers);
  if (regular) {
    for (std::size_t index = 0; index < total; ++index)
      chunk_address[index] = first + index * bytes;
    return;
  }
  for (std::int64_t zc = 0; zc < chunks[0]; ++zc)
    for (std::int64_t yc = 0; yc < chunks[1]; ++yc)
      for (std::int64_t xc = 0; xc < chunks[2]; ++xc)
        chunk_address[chunk_index(zc, yc, xc)] = chunk_address_at(zc, yc, xc);
}

void MapStore::Impl::read_resume_addresses() {
  const Handle done_set(failure.id(H5Dopen2(file.get(), "/resume/plane_done", H5P_DEFAULT),
                                   "H5Dopen2(/resume/plane_done)"),
                        H5Dclose);
  const Handle stats_set(failure.id(H5Dopen2(file.get(), "/resume/plane_stats", H5P_DEFAULT),
                                    "H5Dopen2(/resume/plane_stats)"),
                         H5Dclose);
  done_address = H5Dget_offset(done_set.get());
  stats_address = H5Dget_offset(stats_set.get());
  if (done_address == HADDR_UNDEF || stats_address == HADDR_UNDEF)
    failure.invalid("the /resume datasets have no storage");
}

}  // namespace dcs::io
