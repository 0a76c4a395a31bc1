// Builds without HDF5: the writer exists, fails clearly, and leaves nothing behind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/hdf5.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

TEST(Hdf5Stub, WriteAndReadFailWithAClearMessage) {
  test::ScratchDir dir;
  EXPECT_FALSE(hdf5_available());
  const GridSpec grid = test::asymmetric_grid();
  const std::vector<float> values = test::index_map(grid);
  const std::string path = dir.file("map.h5");
  try {
    write_hdf5(path, values.data(), test::sample_metadata(grid, values), test::sample_system(), {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("built without HDF5"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos);
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_THROW((void)read_hdf5_potential(path), IoError);
}

}  // namespace
}  // namespace dcs::io
