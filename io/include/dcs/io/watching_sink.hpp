// A sink that only watches the slabs (ColourRangeSink, BoxFacesSink): it writes no file, so
// there is nothing to commit or remove, and it is fed only the slabs a run computes; complete()
// reads back through MapReader what else it needs (planes a resumed or MPI run did not stream).
#pragma once

#include "dcs/map_sink.hpp"

namespace dcs::io {

class WatchingSink : public MapSink {
 public:
  bool wants_done_slabs() const override { return false; }
  /// Calls complete(map).
  void finish(const MapMetadata&, MapReader& map) override { complete(map); }
  void commit() override {}
  void abort() noexcept override {}
  /// Reads what no slab brought, so that the result covers the whole map. Idempotent.
  virtual void complete(MapReader& map) = 0;
};

}  // namespace dcs::io
