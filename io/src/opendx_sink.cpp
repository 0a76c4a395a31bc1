// The OpenDX sink (dcs/io/opendx_sink.hpp).
#include "dcs/io/opendx_sink.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"

namespace dcs::io {
namespace {

/// x-columns per read: the store's chunk width when it fits the cap, at least one.
std::int64_t columns_per_read(const GridSpec& grid, std::size_t memory_cap, std::int64_t chunk) {
  const std::size_t column_bytes = static_cast<std::size_t>(grid.ny() * grid.nz()) * sizeof(float);
  const auto fit = static_cast<std::int64_t>(memory_cap / std::max<std::size_t>(column_bytes, 1));
  return std::clamp<std::int64_t>(std::min(fit, chunk), 1, grid.nx());
}

constexpr std::int64_t kDefaultChunk = 64;

}  // namespace

OpenDxSink::OpenDxSink(std::string path, const OpenDxOptions& options, std::size_t memory_cap)
    : path_(std::move(path)), options_(options), memory_cap_(memory_cap) {}

OpenDxSink::~OpenDxSink() = default;

std::size_t OpenDxSink::memory_for(const GridSpec& grid, std::size_t memory_cap) {
  return static_cast<std::size_t>(columns_per_read(grid, memory_cap, kDefaultChunk)) *
         static_cast<std::size_t>(grid.ny() * grid.nz()) * sizeof(float);
}

std::size_t OpenDxSink::memory_bytes() const { return memory_for(grid_, memory_cap_); }

void OpenDxSink::begin(const MapMetadata& meta) { grid_ = meta.grid; }

void OpenDxSink::finish(const MapMetadata& meta, MapReader& map) {
  // The header carries the statistics and provenance, so the file starts now.
  writer_ = std::make_unique<OpenDxWriter>(path_, meta, options_);
  const std::int64_t width = columns_per_read(grid_, memory_cap_, map.x_chunk());
  std::vector<float> columns(static_cast<std::size_t>(width * grid_.ny() * grid_.nz()));
  for (std::int64_t x = 0; x < grid_.nx(); x += width) {
    // A signal stops a long write here (the run's outputs are removed as the stack unwinds).
    if (interrupt_requested()) throw InterruptedError("interrupted while writing " + path_);
    const std::int64_t count = std::min(width, grid_.nx() - x);
    map.read_x_columns(x, count, columns.data());
    writer_->write_x_columns(x, count, columns.data());
  }
}

void OpenDxSink::sync() { writer_->sync(); }

void OpenDxSink::commit() { writer_->commit(); }

void OpenDxSink::abort() noexcept {
  if (writer_) writer_->discard();
  writer_.reset();
}

}  // namespace dcs::io
