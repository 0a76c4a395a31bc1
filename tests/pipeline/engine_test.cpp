// The slab engine and the map store on the CPU backends (label pipeline): the same map and
// statistics for any number of workers and any slab size; slabs reach the sinks in z order;
// worker errors stop the run; a partial store is resumed to the same bytes; mismatches are
// refused with the setting named.
#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/io/null_sink.hpp"
#include "dcs/pipeline/engine.hpp"
#include "test_systems.hpp"

namespace dcs {
namespace {

System random_system(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> position(-12.0, 12.0), charge(-1.0, 1.0);
  System system;
  system.source_path = "random";
  system.source_sha256 = "feedface";
  for (std::size_t a = 0; a < n; ++a) {
    Atom atom;
    atom.position = {position(rng), position(rng), position(rng)};
    atom.charge = charge(rng);
    system.atoms.push_back(atom);
  }
  return system;
}

GridSpec test_grid() {
  return test::make_spec(37, 29, 41, {-15.0, -14.0, -16.0}, {0.8, 1.0, 0.75});
}

/// Collects the whole map from the slabs it is given and checks that they come in z order.
class CollectingSink final : public MapSink {
 public:
  explicit CollectingSink(const GridSpec& grid) : grid_(grid), values_(grid.points()) {}
  std::string name() const override { return "collector"; }
  void begin(const MapMetadata&) override {}
  void write_slab(const Slab& slab, const float* values, const StatsAccum*) override {
    EXPECT_EQ(slab.z_begin, next_z_) << "slabs must arrive in z order";
    next_z_ = slab.z_begin + slab.z_count;
    std::memcpy(values_.data() + static_cast<std::size_t>(slab.z_begin) * grid_.plane_points(),
                values,
                static_cast<std::size_t>(slab.z_count) * grid_.plane_points() * sizeof(float));
    ++slabs_;
    if (fail_after_ >= 0 && slabs_ > fail_after_) throw IoError("sink failure (test)");
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
  }
  void finish(const MapMetadata&, MapReader&) override {}
  void commit() override {}
  void abort() noexcept override {}

  const std::vector<float>& values() const { return values_; }
  std::int64_t next_z() const { return next_z_; }
  void fail_after(int slabs) { fail_after_ = slabs; }
  void delay_each_slab(int milliseconds) { delay_ms_ = milliseconds; }

 private:
  GridSpec grid_;
  std::vector<float> values_;
  std::int64_t next_z_ = 0;
  int slabs_ = 0;
  int fail_after_ = -1;
  int delay_ms_ = 0;
};

struct MapRun {
  std::vector<float> values;
  std::vector<StatsAccum> plane_stats;
};

MapRun compute(const System& system, const GridSpec& grid, unsigned workers, std::int64_t step,
               std::size_t buffers) {
  std::vector<std::unique_ptr<PotentialBackend>> owned;
  std::vector<MapSource*> list;
  for (unsigned w = 0; w < workers; ++w) {
    BackendOptions options;
    options.threads = 1 + w % 2;  // thread counts differ between workers: must not matter
    owned.push_back(make_cpu_fast_backend(options));
    owned.back()->prepare(system, grid, Physics{});
    list.push_back(owned.back().get());
  }
  CollectingSink sink(grid);
  pipeline::MapPlan plan;
  plan.step = step;
  plan.buffers = buffers;
  const pipeline::EngineReport report =
      pipeline::run_engine(grid, list, plan, nullptr, {&sink}, nullptr, "test", system.size());
  EXPECT_EQ(sink.next_z(), grid.nz());
  EXPECT_EQ(report.slabs_computed, static_cast<std::size_t>((grid.nz() + step - 1) / step));
  return {sink.values(), report.plane_stats};
}

bool same_stats(const std::vector<StatsAccum>& a, const std::vector<StatsAccum>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(StatsAccum)) != 0) return false;
  return true;
}

TEST(Engine, SameMapAndStatisticsForAnyWorkerCountAndSlabSize) {
  const System system = random_system(300, 7);
  const GridSpec grid = test_grid();
  const MapRun one = compute(system, grid, 1, 41, 2);
  for (const auto& [workers, step, buffers] :
       std::vector<std::tuple<unsigned, std::int64_t, std::size_t>>{
           {1, 1, 2}, {2, 3, 3}, {3, 5, 4}, {4, 7, 9}}) {
    const MapRun other = compute(system, grid, workers, step, buffers);
    EXPECT_EQ(
        0, std::memcmp(one.values.data(), other.values.data(), one.values.size() * sizeof(float)))
        << workers << " workers, slabs of " << step;
    EXPECT_TRUE(same_stats(one.plane_stats, other.plane_stats)) << workers << " workers";
  }
}

/// Throws on the slab that holds plane `bad_plane`.
class FailingBackend final : public PotentialBackend {
 public:
  explicit FailingBackend(std::int64_t bad_plane) : bad_plane_(bad_plane) {}
  std::string name() const override { return "failing"; }
  std::string kernel_name() const override { return "none"; }
  std::string reduction_name() const override { return "none"; }
  std::string device_name() const override { return "test"; }
  double tolerance() const override { return 0.0; }
  void prepare(const System&, const GridSpec& grid, const Physics&) override { grid_ = grid; }
  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (bad_plane_ >= slab.z_begin && bad_plane_ < slab.z_begin + slab.z_count)
      throw CudaError("device lost (test)");
    const std::size_t n = grid_.plane_points();
    for (std::int64_t p = 0; p < slab.z_count; ++p) {
      std::fill(out + static_cast<std::size_t>(p) * n, out + static_cast<std::size_t>(p + 1) * n,
                1.0f);
      plane_stats[p] = cpu_statistics(out + static_cast<std::size_t>(p) * n, n);
    }
  }
  StatsAccum statistics(const float* v, std::size_t n) override { return cpu_statistics(v, n); }
  DiffAccum difference(const float* v, const double* r, std::size_t n) override {
    return cpu_difference(v, r, n);
  }
  void prepare_points(const System&, const Physics&) override {}
  void compute_points(const Vec3*, const std::uint32_t*, std::size_t, float*) override {
    throw CudaError("device lost (test)");
  }
  std::unique_ptr<HostBuffer> allocate_host(std::size_t floats) override {
    ++allocations;
    return allocate_plain_host(floats);
  }
  std::atomic<int> allocations{0};

 private:
  std::int64_t bad_plane_;
  GridSpec grid_;
};

TEST(Engine, AWorkerErrorStopsEveryWorkerAndIsRethrown) {
  const GridSpec grid = test_grid();
  FailingBackend good(20), bad(20);  // whichever worker takes plane 20 fails
  good.prepare({}, grid, {});
  bad.prepare({}, grid, {});
  CollectingSink sink(grid);
  pipeline::MapPlan plan;
  plan.step = 2;
  plan.buffers = 3;
  EXPECT_THROW(pipeline::run_engine(grid, {&good, &bad}, plan, nullptr, {&sink}, nullptr, "t", 1),
               CudaError);
  EXPECT_LE(sink.next_z(), 20);           // nothing past the failed slab reached the sink
  EXPECT_EQ(good.allocations.load(), 3);  // the pool is the plan's buffers, whatever the grid
}

TEST(Engine, ASinkErrorStopsTheWorkers) {
  const GridSpec grid = test_grid();
  FailingBackend backend(-1);
  backend.prepare({}, grid, {});
  CollectingSink sink(grid);
  sink.fail_after(3);
  pipeline::MapPlan plan;
  plan.step = 1;
  plan.buffers = 2;
  EXPECT_THROW(pipeline::run_engine(grid, {&backend}, plan, nullptr, {&sink}, nullptr, "t", 1),
               IoError);
}

/// A store in memory whose done planes the test chooses; done planes hold 2.0, so a sink can
/// tell slabs read back from slabs computed (FailingBackend writes 1.0).
class MemoryStore final : public io::SlabStore {
 public:
  MemoryStore(const GridSpec& grid, std::vector<std::uint8_t> done)
      : grid_(grid), done_(std::move(done)), stats_(done_.size()), values_(grid.points(), 0.0f) {
    for (std::size_t z = 0; z < done_.size(); ++z)
      if (done_[z] != 0)
        std::fill_n(values_.begin() + static_cast<std::ptrdiff_t>(z * grid.plane_points()),
                    grid.plane_points(), 2.0f);
  }
  const std::vector<std::uint8_t>& plane_done() const noexcept override { return done_; }
  const std::vector<StatsAccum>& plane_stats() const noexcept override { return stats_; }
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override {
    std::copy_n(values, static_cast<std::size_t>(slab.z_count) * grid_.plane_points(),
                values_.begin() + static_cast<std::ptrdiff_t>(slab.z_begin * grid_.plane_points()));
    std::copy_n(plane_stats, slab.z_count, stats_.begin() + slab.z_begin);
  }
  void checkpoint() override {}
  void read_planes(const Slab& slab, float* out) override {
    std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(slab.z_begin * grid_.plane_points()),
                static_cast<std::size_t>(slab.z_count) * grid_.plane_points(), out);
  }

 private:
  GridSpec grid_;
  std::vector<std::uint8_t> done_;
  std::vector<StatsAccum> stats_;
  std::vector<float> values_;
};

// A resumed run whose done slabs lie between slabs still to compute, with a fast worker and a
// slow sink: the worker must not hold every buffer while the writer needs one to read a done
// slab back (this deadlocked under ASan timing in CI).
TEST(Engine, DoneSlabsBetweenComputedOnesAreReadBackWithoutDeadlock) {
  const GridSpec grid = test_grid();
  for (const std::size_t buffers : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    std::vector<std::uint8_t> done(static_cast<std::size_t>(grid.nz()), 0);
    for (std::size_t z = 2; z < done.size(); z += 3) done[z] = 1;
    MemoryStore store(grid, done);
    FailingBackend a(-1), b(-1);
    a.prepare({}, grid, {});
    b.prepare({}, grid, {});
    CollectingSink sink(grid);
    sink.delay_each_slab(2);
    pipeline::MapPlan plan;
    plan.step = 1;
    plan.buffers = buffers;
    plan.checkpoint_seconds = 0.0;
    auto run = std::async(std::launch::async, [&] {
      return pipeline::run_engine(grid, {&a, &b}, plan, &store, {&sink}, nullptr, "t", 1);
    });
    if (run.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      std::fprintf(stderr, "run_engine deadlocked with %zu buffers\n", buffers);
      std::_Exit(1);  // the engine's threads cannot be joined
    }
    const pipeline::EngineReport report = run.get();
    EXPECT_EQ(report.slabs_reused, static_cast<std::size_t>(grid.nz() / 3));
    EXPECT_EQ(sink.next_z(), grid.nz());
    for (std::int64_t z = 0; z < grid.nz(); ++z)
      EXPECT_EQ(sink.values()[static_cast<std::size_t>(z) * grid.plane_points()],
                done[static_cast<std::size_t>(z)] != 0 ? 2.0f : 1.0f)
          << "plane " << z;
  }
}

MapMetadata metadata(const GridSpec& grid) {
  MapMetadata meta;
  meta.grid = grid;
  meta.coulomb_factor = coulomb_factor(meta.physics);
  return meta;
}

io::ResumeKey key(const std::string& dielectric) {
  return {"feedface", {{"grid", "37 29 41"}, {"dielectric", dielectric}}};
}

class StoreTest : public ::testing::TestWithParam<int> {  // parameter: gzip level
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dcs-engine-test-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_P(StoreTest, AnInterruptedStoreResumesToTheSameBytes) {
  const System system = random_system(200, 11);
  const GridSpec grid = test_grid();
  const MapMetadata meta = metadata(grid);
  const MapRun reference = compute(system, grid, 1, 41, 2);
  auto backend = make_cpu_fast_backend({});
  backend->prepare(system, grid, Physics{});
  io::MapStoreOptions options;
  options.gzip_level = GetParam();
  options.chunk_depth = 4;
  pipeline::MapPlan plan;
  plan.step = 4;
  plan.buffers = 2;
  plan.checkpoint_seconds = 0.0;
  const std::string partial = io::partial_path_for(file("map.h5"));
  {
    io::MapStore store = io::MapStore::create(partial, meta, system, key("1"), options);
    CollectingSink failing(grid);
    failing.fail_after(5);  // dies after 5 slabs: 20 planes are in the store
    EXPECT_THROW(pipeline::run_engine(grid, {backend.get()}, plan, &store, {&failing}, nullptr, "t",
                                      system.size()),
                 IoError);
    store.close_keeping();
  }
  EXPECT_THROW((void)io::MapStore::open_partial(partial, meta, key("2")), io::ResumeMismatch);
  try {
    (void)io::MapStore::open_partial(partial, meta, key("4"));
  } catch (const io::ResumeMismatch& error) {
    EXPECT_NE(std::string(error.what()).find("dielectric was 1, now 4"), std::string::npos)
        << error.what();
  }
  io::MapStore store = io::MapStore::open_partial(partial, meta, key("1"));
  EXPECT_GE(store.planes_done(), 16);
  EXPECT_LT(store.planes_done(), grid.nz());
  CollectingSink sink(grid);  // sinks still see every slab: done ones are read back
  const pipeline::EngineReport report = pipeline::run_engine(grid, {backend.get()}, plan, &store,
                                                             {&sink}, nullptr, "t", system.size());
  EXPECT_GT(report.slabs_reused, 0u);
  EXPECT_TRUE(same_stats(reference.plane_stats, report.plane_stats));
  EXPECT_EQ(0, std::memcmp(reference.values.data(), sink.values().data(),
                           reference.values.size() * sizeof(float)));
  std::vector<float> back(grid.points());
  store.read_planes({0, grid.nz()}, back.data());
  EXPECT_EQ(0, std::memcmp(reference.values.data(), back.data(), back.size() * sizeof(float)));
  // x-columns come back in [k][j][i] order.
  std::vector<float> columns(static_cast<std::size_t>(3 * grid.ny() * grid.nz()));
  store.read_x_columns(5, 3, columns.data());
  for (std::int64_t k = 0; k < grid.nz(); k += 7)
    for (std::int64_t j = 0; j < grid.ny(); j += 5)
      for (std::int64_t di = 0; di < 3; ++di)
        EXPECT_EQ(columns[static_cast<std::size_t>((k * grid.ny() + j) * 3 + di)],
                  reference.values[grid.index(5 + di, j, k)]);
  MapMetadata done = meta;
  store.finish(done);
  store.commit(file("map.h5"), false);
  EXPECT_TRUE(std::filesystem::exists(file("map.h5")));
  EXPECT_FALSE(std::filesystem::exists(partial));
}

INSTANTIATE_TEST_SUITE_P(Uncompressed, StoreTest, ::testing::Values(0));
INSTANTIATE_TEST_SUITE_P(Compressed, StoreTest, ::testing::Values(3));

}  // namespace
}  // namespace dcs
