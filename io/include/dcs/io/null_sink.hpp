// A sink that takes every slab and keeps nothing: the pipeline without output (benchmarks,
// --null-output).
#pragma once

#include <cstddef>
#include <string>

#include "dcs/map_sink.hpp"

namespace dcs::io {

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

}  // namespace dcs::io
