// The non-virtual parts of dcs::MapSource and dcs::PotentialBackend, their defaults, and plain
// host buffers.
#include "dcs/backend.hpp"

#include <memory>
#include <string>
#include <vector>

#include "dcs/parallel.hpp"

namespace dcs {
namespace {

class PlainHostBuffer final : public HostBuffer {
 public:
  explicit PlainHostBuffer(std::size_t floats) : storage_(new float[floats]) {
    data_ = storage_.get();
    size_ = floats;
  }

 private:
  std::unique_ptr<float[]> storage_;  // new float[] leaves the pages untouched until written
};

}  // namespace

std::unique_ptr<HostBuffer> allocate_plain_host(std::size_t floats) {
  return std::make_unique<PlainHostBuffer>(floats);
}

StatsAccum MapSource::compute(const Slab& slab, float* out) {
  std::vector<StatsAccum> planes(static_cast<std::size_t>(slab.z_count > 0 ? slab.z_count : 0));
  compute_slab(slab, out, planes.data());
  StatsAccum total;
  for (const StatsAccum& plane : planes) total = StatsAccum::combine(total, plane);
  return total;
}

std::unique_ptr<HostBuffer> MapSource::allocate_host(std::size_t floats) {
  return allocate_plain_host(floats);
}

std::string PotentialBackend::reference_points(const System& system, const Physics& physics,
                                               const Vec3* points, std::size_t n, double* out,
                                               unsigned threads) {
  reference_potential(system, physics, points, n, out, threads);
  const unsigned used = resolve_threads(threads);
  return "CPU, " + std::to_string(used) + (used == 1 ? " thread" : " threads");
}

}  // namespace dcs
