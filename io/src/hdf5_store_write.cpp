// Writing the resumable map store (map_store_impl.hpp): slabs packed into chunks, written in
// place (uncompressed) or deflated on every thread and written in order (compressed), and the
// checkpoint that makes them durable before their planes are flagged done.
#include <hdf5.h>
#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "fd_io.hpp"
#include "map_checks.hpp"
#include "map_store_impl.hpp"

namespace dcs::io {

namespace {

/// Byte-shuffles `n` 4-byte elements (HDF5's shuffle filter: all first bytes, then all second
/// bytes, ...).
void shuffle4(const float* in, std::size_t n, std::uint8_t* out) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(in);
  for (std::size_t e = 0; e < n; ++e)
    for (std::size_t b = 0; b < 4; ++b) out[b * n + e] = bytes[4 * e + b];
}

}  // namespace

void MapStore::Impl::pack(const float* slab_values, std::int64_t s0, std::int64_t p0,
                          std::int64_t p1, std::int64_t yc, std::int64_t xc, float* out) const {
  const std::int64_t y0 = yc * chunk[1], x0 = xc * chunk[2];
  const std::int64_t ny = std::min(chunk[1], grid.ny() - y0);
  const std::int64_t nx = std::min(chunk[2], grid.nx() - x0);
  const std::size_t plane = grid.plane_points();
  for (std::int64_t p = p0; p < p1; ++p) {
    float* dst_plane = out + static_cast<std::size_t>((p - p0) * chunk[1] * chunk[2]);
    if (ny < chunk[1] || nx < chunk[2]) std::fill(dst_plane, dst_plane + chunk[1] * chunk[2], 0.0f);
    for (std::int64_t j = 0; j < ny; ++j) {
      const std::size_t src_index = static_cast<std::size_t>(p - s0) * plane +
                                    static_cast<std::size_t>((y0 + j) * grid.nx() + x0);
      const float* src = slab_values + src_index;
      float* dst = dst_plane + j * chunk[2];
      for (std::int64_t i = 0; i < nx; ++i) {
        if (!std::isfinite(src[i]))
          throw detail::nonfinite_value_error(path, src[i], grid,
                                              static_cast<std::size_t>(s0) * plane + src_index + i);
        dst[i] = src[i];
      }
    }
  }
}

void MapStore::Impl::write_uncompressed(const Slab& slab, const float* values) {
  const std::int64_t s0 = slab.z_begin, s1 = slab.z_begin + slab.z_count;
  const std::int64_t zc0 = s0 / chunk[0], zc1 = (s1 - 1) / chunk[0] + 1;
  const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
  const std::size_t jobs = static_cast<std::size_t>(zc1 - zc0) * per_row;
  const std::size_t plane_bytes = static_cast<std::size_t>(chunk[1] * chunk[2]) * sizeof(float);
  const std::size_t chunk_bytes = chunk_floats() * sizeof(float);
  // Where the planes [p0, p1) of job's chunk go in the file.
  const auto planes = [&](std::size_t job) {
    const std::int64_t zc = chunk_of_job(zc0, job)[0];
    return std::pair{std::max(s0, zc * chunk[0]), std::min(s1, (zc + 1) * chunk[0])};
  };
  const auto offset_of = [&](std::size_t job) {
    const auto [zc, yc, xc] = chunk_of_job(zc0, job);
    return chunk_address[chunk_index(zc, yc, xc)] +
           static_cast<std::uint64_t>(planes(job).first - zc * chunk[0]) * plane_bytes;
  };
  // Direct writes wait for the disk on the thread that packed the run: as many threads as
  // writers keep that many requests in flight.
  const unsigned n_threads = direct->active() ? std::max(threads, writers) : threads;
  // Chunks written whole and back to back in the file go out as runs of up to 1 MiB: fewer,
  // larger requests, and partial pages only at a run's ends. Others (a slab's partial chunk
  // rows) one by one, as before. The threads' run buffers stay within 16 MiB (or a chunk each).
  const std::size_t run_bytes = std::clamp<std::size_t>((std::size_t{16} << 20) / n_threads,
                                                        chunk_bytes, std::size_t{1} << 20);
  const std::size_t per_run = std::max<std::size_t>(1, run_bytes / chunk_bytes);
  const auto whole = [&](std::size_t job) {
    const auto [p0, p1] = planes(job);
    return static_cast<std::size_t>(p1 - p0) * plane_bytes == chunk_bytes;
  };
  std::vector<std::size_t> run_start;
  for (std::size_t job = 0; job < jobs;) {
    run_start.push_back(job);
    std::size_t next = job + 1;
    while (whole(job) && next < jobs && next - job < per_run && whole(next) &&
           offset_of(next) == offset_of(next - 1) + chunk_bytes)
      ++next;
    job = next;
  }
  run_start.push_back(jobs);
  parallel_for(run_start.size() - 1, n_threads, [&](std::size_t begin, std::size_t end) {
    std::vector<float> aside;
    const DirectWrites::Buffer aligned = DirectWrites::buffer(per_run * chunk_bytes);
    for (std::size_t run = begin; run < end; ++run) {
      const std::uint64_t offset = offset_of(run_start[run]);
      // Packed where the direct write wants it: at the file offset's place within a page (a
      // float-aligned one; else packed aside and copied there).
      char* const at = aligned.get() + DirectWrites::lead(offset);
      const bool in_place = reinterpret_cast<std::uintptr_t>(at) % alignof(float) == 0;
      std::size_t bytes = 0;
      for (std::size_t job = run_start[run]; job < run_start[run + 1]; ++job) {
        const auto [zc, yc, xc] = chunk_of_job(zc0, job);
        const auto [p0, p1] = planes(job);
        const std::size_t size = static_cast<std::size_t>(p1 - p0) * plane_bytes;
        if (in_place) {
          pack(values, s0, p0, p1, yc, xc, reinterpret_cast<float*>(at + bytes));
        } else {
          aside.resize(chunk_floats());
          pack(values, s0, p0, p1, yc, xc, aside.data());
          std::memcpy(at + bytes, aside.data(), size);
        }
        bytes += size;
      }
      direct->write(at, bytes, offset);
    }
  });
  if (!rows_contiguous) return;  // fdatasync() alone writes it back
  // The slab's chunk rows are one contiguous range of the file: its writeback starts now, on
  // every writer, instead of all at the next checkpoint on one thread.
  const std::uint64_t begin = chunk_address[chunk_index(zc0, 0, 0)];
  const std::uint64_t end = chunk_address[chunk_index(zc1 - 1, chunks[1] - 1, chunks[2] - 1)] +
                            chunk_floats() * sizeof(float);
  pending_begin = std::min(pending_begin, begin);
  pending_end = std::max(pending_end, end);
  writes->start_writeback(fd, begin, end, path);
}

void MapStore::Impl::write_compressed(const Slab& slab, const float* values) {
  const std::int64_t s0 = slab.z_begin, s1 = slab.z_begin + slab.z_count;
  if (s0 % chunk[0] != 0 || (s1 % chunk[0] != 0 && s1 != grid.nz()))
    throw InternalError(
        fmt::format("slab [{}, {}) of a compressed map is not aligned "
                    "to its {}-plane chunks",
                    s0, s1, chunk[0]));
  const std::int64_t zc0 = s0 / chunk[0], zc1 = (s1 - 1) / chunk[0] + 1;
  const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
  const std::size_t jobs = static_cast<std::size_t>(zc1 - zc0) * per_row;
  // A pipeline: every thread compresses the next chunk not yet taken, and the calling thread
  // (the only one that calls HDF5) writes the compressed chunks in job order as soon as each
  // is ready, between compressing chunks of its own. The file gets the same chunks, in the
  // same order, as when all were compressed first; deflate and the writes now overlap.
  std::vector<std::vector<std::uint8_t>> compressed(jobs);
  std::vector<std::uint8_t> ready(jobs, 0);  // under `mutex`
  std::mutex mutex;
  std::condition_variable chunk_ready;
  std::atomic<std::size_t> next_job{0};
  std::atomic<bool> stop{false};
  const std::size_t floats = chunk_floats();
  std::size_t next_write = 0;  // the writer's
  const auto write_ready = [&](bool wait) {
    while (next_write < jobs) {
      {
        std::unique_lock guard(mutex);
        if (wait) chunk_ready.wait(guard, [&] { return ready[next_write] != 0 || stop.load(); });
        if (stop.load()) return;
        if (ready[next_write] == 0) return;
      }
      const auto [zc, yc, xc] = chunk_of_job(zc0, next_write);
      const std::array<hsize_t, 3> offset{static_cast<hsize_t>(zc * chunk[0]),
                                          static_cast<hsize_t>(yc * chunk[1]),
                                          static_cast<hsize_t>(xc * chunk[2])};
      std::vector<std::uint8_t>& bytes = compressed[next_write];
      failure.status(
          H5Dwrite_chunk(dataset.get(), H5P_DEFAULT, 0, offset.data(), bytes.size(), bytes.data()),
          fmt::format("H5Dwrite_chunk(potential, planes {}-{})", zc * chunk[0],
                      std::min(grid.nz(), (zc + 1) * chunk[0]) - 1));
      std::vector<std::uint8_t>().swap(bytes);  // written: its memory goes back now
      ++next_write;
    }
  };
  if (!compress_pool) compress_pool = std::make_unique<ThreadPool>(threads);
  compress_pool->parallel_for(compress_pool->size(), [&](std::size_t begin, std::size_t) {
    const bool is_writer = begin == 0;  // the calling thread's range
    try {
      std::vector<float> buffer(floats, 0.0f);
      std::vector<std::uint8_t> shuffled(floats * sizeof(float));
      std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
          libdeflate_alloc_compressor(gzip_level), libdeflate_free_compressor);
      if (!compressor) throw IoError("cannot allocate a deflate compressor (out of memory)");
      const std::size_t bound =
          libdeflate_zlib_compress_bound(compressor.get(), floats * sizeof(float));
      for (std::size_t job; !stop.load() && (job = next_job.fetch_add(1)) < jobs;) {
        const auto [zc, yc, xc] = chunk_of_job(zc0, job);
        const std::int64_t p0 = zc * chunk[0];
        const std::int64_t p1 = std::min(s1, (zc + 1) * chunk[0]);
        if (p1 - p0 < chunk[0]) std::fill(buffer.begin(), buffer.end(), 0.0f);  // last row
        pack(values, s0, p0, p1, yc, xc, buffer.data());
        shuffle4(buffer.data(), floats, shuffled.data());
        std::vector<std::uint8_t> out(bound);
        const std::size_t size = libdeflate_zlib_compress(compressor.get(), shuffled.data(),
                                                          shuffled.size(), out.data(), out.size());
        if (size == 0) throw IoError("deflate failed on a chunk of the map");
        out.resize(size);
        compressed[job] = std::move(out);
        {
          const std::lock_guard guard(mutex);
          ready[job] = 1;
        }
        chunk_ready.notify_all();
        if (is_writer) write_ready(false);
      }
      if (is_writer) write_ready(true);
    } catch (...) {
      stop.store(true);
      {
        const std::lock_guard guard(mutex);  // a waiting writer sees `stop`
      }
      chunk_ready.notify_all();
      throw;
    }
  });
  if (next_write != jobs) throw InternalError("compressed chunks left unwritten");
}

void MapStore::Impl::checkpoint() {
  if (pending.empty()) return;
  std::sort(pending.begin(), pending.end());
  if (gzip_level > 0) failure.status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush");
  // Statistics first, then data and statistics to stable storage, then the flags.
  for (const std::int64_t z : pending) {
    const h5::PlaneStatsRow row = h5::plane_stats_row(stats[static_cast<std::size_t>(z)]);
    write_at(fd, row.data(), sizeof row, stats_address + static_cast<std::uint64_t>(z) * sizeof row,
             path);
  }
  if (writes && pending_end > pending_begin)  // the values on every writer, then the rest
    writes->write_back(fd, pending_begin, pending_end, path);
  pending_begin = UINT64_MAX;
  pending_end = 0;
  data_sync(fd, path);
  const std::uint8_t one = 1;
  for (const std::int64_t z : pending) {
    write_at(fd, &one, 1, done_address + static_cast<std::uint64_t>(z), path);
    done[static_cast<std::size_t>(z)] = 1;
  }
  pending.clear();
}

}  // namespace dcs::io
