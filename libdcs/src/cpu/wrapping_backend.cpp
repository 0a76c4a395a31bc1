// WrappingBackend's checks (dcs/wrapping_backend.hpp).
#include "dcs/wrapping_backend.hpp"

#include <memory>
#include <string>
#include <utility>

#include "dcs/error.hpp"

namespace dcs {

WrappingBackend::WrappingBackend(std::unique_ptr<PotentialBackend> wrapped, const char* factory)
    : wrapped_(std::move(wrapped)) {
  if (!wrapped_) throw InternalError(std::string(factory) + ": no exact backend to wrap");
}

void WrappingBackend::check_slab(const char* method, const Slab& slab, const GridSpec& grid) {
  if (slab.z_begin < 0 || slab.z_count < 0 || slab.z_begin + slab.z_count > grid.nz())
    throw UsageError(std::string(method) + ": slab [" + std::to_string(slab.z_begin) + ", " +
                     std::to_string(slab.z_begin + slab.z_count) + ") outside the grid's " +
                     std::to_string(grid.nz()) + " planes");
}

}  // namespace dcs
