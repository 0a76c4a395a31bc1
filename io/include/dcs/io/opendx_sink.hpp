// The OpenDX writer as a sink of the map pipeline (dcs/map_sink.hpp). OpenDX lists z fastest,
// so the sink takes no slabs: at finish() it reads the map back from the store in x-columns.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "dcs/io/opendx.hpp"
#include "dcs/map_sink.hpp"

namespace dcs::io {

/// Writes an APBS OpenDX file in bounded memory: at finish() it reads the map back from the
/// store, a few x-columns at a time (at most `memory_cap` bytes), and formats them in DX order.
class OpenDxSink final : public MapSink {
 public:
  OpenDxSink(std::string path, const OpenDxOptions& options, std::size_t memory_cap);
  ~OpenDxSink() override;
  /// Host bytes the sink will hold for `grid` under `memory_cap`.
  static std::size_t memory_for(const GridSpec& grid, std::size_t memory_cap);

  std::string name() const override { return path_; }
  bool wants_slabs() const override { return false; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab&, const float*, const StatsAccum*) override {}
  void finish(const MapMetadata& meta, MapReader& map) override;
  void sync() override;
  void commit() override;
  void abort() noexcept override;

 private:
  std::string path_;
  OpenDxOptions options_;
  std::size_t memory_cap_;
  GridSpec grid_;
  std::unique_ptr<OpenDxWriter> writer_;
};

}  // namespace dcs::io
