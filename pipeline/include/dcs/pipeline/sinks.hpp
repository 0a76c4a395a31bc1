// The sinks the pipeline itself provides: OpenDX (read back from the store in x-slabs, since DX
// lists z fastest) and a null sink for benchmarks. The HDF5 store is not a sink: it is the
// pipeline's durable record, written first, resumed from and read back by the other sinks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "dcs/io/opendx.hpp"
#include "dcs/map_sink.hpp"

namespace dcs::pipeline {

/// Writes an APBS OpenDX file in bounded memory: at finish() it reads the map back from the
/// store, a few x-columns at a time (at most `memory_cap` bytes), and formats them in DX order.
class OpenDxSink final : public MapSink {
 public:
  OpenDxSink(std::string path, const io::OpenDxOptions& options, std::size_t memory_cap);
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
  io::OpenDxOptions options_;
  std::size_t memory_cap_;
  GridSpec grid_;
  std::unique_ptr<io::OpenDxWriter> writer_;
};

/// Takes every slab and keeps nothing (benchmarks: the pipeline without output).
class NullSink final : public MapSink {
 public:
  std::string name() const override { return "(no output)"; }
  void begin(const MapMetadata&) override {}
  void write_slab(const Slab& slab, const float*, const StatsAccum*) override {
    planes_ += static_cast<std::size_t>(slab.z_count);
  }
  void finish(const MapMetadata&, MapReader&) override {}
  void commit() override {}
  void abort() noexcept override {}
  std::size_t planes() const noexcept { return planes_; }

 private:
  std::size_t planes_ = 0;
};

}  // namespace dcs::pipeline
