// How many threads write a map's file (the HDF5 store's uncompressed values, an MRC map): a
// small pool, since one thread writing a file back to the disk runs at one writer's speed
// (io/src/parallel_writes.hpp). The files' bytes do not depend on it.
#pragma once

namespace dcs::io {

/// `requested` when not 0 (at most 64), else the environment's DCS_WRITERS when set (1 to 64;
/// UsageError naming the value otherwise), else min(4, max(1, hardware threads / 2)).
unsigned map_writers(unsigned requested = 0);

}  // namespace dcs::io
