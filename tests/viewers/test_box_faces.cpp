// BoxFacesSink: the faces' max |V|, the same whether the planes stream past or are read back (a
// resumed or MPI run); the criterion on both sides (a face at the colour range warns, one just
// under it does not; atoms outside the box warn whatever the faces); the padding it suggests for
// a point charge (1/r: the estimate is exact) and a dipole (1/r^2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dcs/io/box_faces.hpp"

namespace dcs::io {
namespace {

struct Field {
  GridSpec grid;
  std::vector<float> values;
};

/// A cubic grid of n points and spacing h centred on 0, holding q/r from +q at `plus` (and -q at
/// `minus` when `dipole`), r clamped at h.
Field coulomb(std::int64_t n, double h, const Vec3& plus, const Vec3& minus, bool dipole) {
  Field f;
  f.grid.counts = {n, n, n};
  f.grid.spacing = {h, h, h};
  const double start = -0.5 * h * static_cast<double>(n - 1);
  f.grid.origin = {start, start, start};
  f.values.resize(f.grid.points());
  auto inverse = [&](const Vec3& p, const Vec3& c) {
    return 1.0 / std::max(h, std::hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]));
  };
  for (std::int64_t k = 0; k < n; ++k)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const Vec3 p = f.grid.point(i, j, k);
        f.values[f.grid.index(i, j, k)] =
            static_cast<float>(100.0 * (inverse(p, plus) - (dipole ? inverse(p, minus) : 0.0)));
      }
  return f;
}

MapMetadata metadata(const GridSpec& grid) {
  MapMetadata meta;
  meta.grid = grid;
  return meta;
}

class Planes final : public MapReader {
 public:
  explicit Planes(const Field& f) : f_(f) {}
  void read_planes(const Slab& slab, float* out) override {
    const std::size_t plane = f_.grid.plane_points();
    read += slab.z_count;
    std::copy_n(f_.values.data() + static_cast<std::size_t>(slab.z_begin) * plane,
                static_cast<std::size_t>(slab.z_count) * plane, out);
  }
  void read_x_columns(std::int64_t, std::int64_t, float*) override { ADD_FAILURE(); }
  std::int64_t x_chunk() const override { return 1; }
  std::int64_t read = 0;

 private:
  const Field& f_;
};

TEST(BoxFaces, FacesTheSameStreamedOrReadBack) {
  const Field f = coulomb(21, 1.0, {0.3, -0.2, 0.1}, {}, false);
  const std::size_t plane = f.grid.plane_points();
  BoxFacesSink streamed({0.3, -0.2, 0.1}, {0.3, -0.2, 0.1}, 1.0);
  streamed.begin(metadata(f.grid));
  for (std::int64_t z = 0; z < 21; z += 4)
    streamed.write_slab(Slab{z, std::min<std::int64_t>(4, 21 - z)}, f.values.data() + z * plane,
                        nullptr);
  Planes none(f);
  streamed.complete(none);
  EXPECT_EQ(none.read, 0);

  double x_minus = 0.0, z_plus = 0.0;
  for (std::int64_t a = 0; a < 21; ++a)
    for (std::int64_t b = 0; b < 21; ++b) {
      x_minus = std::max(x_minus, std::fabs(static_cast<double>(f.values[f.grid.index(0, a, b)])));
      z_plus = std::max(z_plus, std::fabs(static_cast<double>(f.values[f.grid.index(a, b, 20)])));
    }
  EXPECT_EQ(streamed.face_max_abs()[0], x_minus);
  EXPECT_EQ(streamed.face_max_abs()[5], z_plus);

  BoxFacesSink resumed({0.3, -0.2, 0.1}, {0.3, -0.2, 0.1}, 1.0);
  resumed.begin(metadata(f.grid));
  resumed.write_slab(Slab{5, 6}, f.values.data() + 5 * plane, nullptr);  // planes 5..10 only
  Planes reader(f);
  resumed.complete(reader);
  EXPECT_EQ(reader.read, 15);
  resumed.complete(reader);  // idempotent
  EXPECT_EQ(reader.read, 15);
  EXPECT_EQ(resumed.face_max_abs(), streamed.face_max_abs());
  EXPECT_EQ(resumed.check(5.0).fraction, streamed.check(5.0).fraction);
}

// A point charge at the centre, 100/r: the faces' max is 10 (r = 10 Å). A colour range of 10
// (reached) warns; 10.5 (not reached) does not.
TEST(BoxFaces, WarnsWhereAFaceReachesTheColourRangeOnly) {
  const Field f = coulomb(21, 1.0, {0, 0, 0}, {}, false);
  BoxFacesSink sink({-1, -1, -1}, {1, 1, 1}, 1.0);
  sink.begin(metadata(f.grid));
  sink.write_slab(Slab{0, 21}, f.values.data(), nullptr);
  EXPECT_NEAR(sink.check(10.0).face_max_abs, 10.0, 1e-5);
  EXPECT_TRUE(sink.check(9.99).too_close);
  const BoxFacesCheck below = sink.check(10.5);
  EXPECT_FALSE(below.too_close) << below.fraction;
  EXPECT_EQ(below.atoms_outside, 0.0);
  EXPECT_EQ(below.extra_padding, 0.0);
}

// Atoms beyond a face (a trajectory frame whose molecule left the box): too close at any colour
// range, with how far they stick out.
TEST(BoxFaces, AtomsOutsideTheBoxWarnWhateverTheFaces) {
  const Field f = coulomb(21, 1.0, {0, 0, 0}, {}, false);
  BoxFacesSink sink({-1, -1, -1}, {13.5, 1, 1}, 1.0);  // the grid ends at x = 10
  sink.begin(metadata(f.grid));
  sink.write_slab(Slab{0, 21}, f.values.data(), nullptr);
  const BoxFacesCheck c = sink.check(1000.0);
  EXPECT_TRUE(c.too_close);
  EXPECT_NEAR(c.atoms_outside, 3.5, 1e-12);
  EXPECT_LT(c.fraction, 1.0);
}

// A point charge: the faces at 10 Å reach 10 (100/r); against a range of 6 the suggested
// padding puts every face just under 6.
TEST(BoxFaces, PointChargeEstimateBringsTheFacesToTheLimit) {
  const Field small = coulomb(21, 1.0, {0, 0, 0}, {}, false);
  BoxFacesSink sink({0, 0, 0}, {0, 0, 0}, 1.0);
  sink.begin(metadata(small.grid));
  sink.write_slab(Slab{0, 21}, small.values.data(), nullptr);
  const BoxFacesCheck first = sink.check(6.0);
  EXPECT_EQ(first.decay_power, 1);
  EXPECT_NEAR(first.face_max_abs, 10.0, 1e-5);
  ASSERT_TRUE(first.too_close) << first.fraction;
  ASSERT_GT(first.extra_padding, 0.0);

  const auto n = static_cast<std::int64_t>(21 + 2 * std::ceil(first.extra_padding));
  const Field large = coulomb(n, 1.0, {0, 0, 0}, {}, false);
  BoxFacesSink again({0, 0, 0}, {0, 0, 0}, 1.0);
  again.begin(metadata(large.grid));
  again.write_slab(Slab{0, n}, large.values.data(), nullptr);
  const BoxFacesCheck second = again.check(6.0);
  EXPECT_FALSE(second.too_close) << second.fraction;
  EXPECT_GT(second.fraction, 5.0 / 6.0);  // and the estimate is not wildly large
}

TEST(BoxFaces, NeutralMoleculeDecaysAsADipole) {
  const Field f = coulomb(21, 1.0, {1, 0, 0}, {-1, 0, 0}, true);
  BoxFacesSink sink({-1, 0, 0}, {1, 0, 0}, 0.0);
  sink.begin(metadata(f.grid));
  sink.write_slab(Slab{0, 21}, f.values.data(), nullptr);
  const BoxFacesCheck c = sink.check(0.5);
  EXPECT_EQ(c.decay_power, 2);
  EXPECT_EQ(c.face / 2, 0);  // on the dipole's axis
  EXPECT_TRUE(c.too_close);
  // 1/d^2 from 10 Å to the limit: d = 10 sqrt(fraction).
  EXPECT_NEAR(c.extra_padding, 10.0 * std::sqrt(c.fraction) - 10.0, 1e-6);
}

}  // namespace
}  // namespace dcs::io
