// The frame engine (frame_engine.hpp).
#include "frame_engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/profile.hpp"
#include "dcs/timer.hpp"

namespace dcs::pipeline {
namespace {

constexpr std::size_t kStatisticsBytesPerPoint = 2 * sizeof(double) + 2 * sizeof(float);

/// One frame decoded and waiting for a worker.
struct Item {
  std::size_t k = 0;
  System atoms;
  GridSpec grid;  ///< the frame's points (FrameSource::frame_grid())
};

/// One block of planes: its threads, queue and buffers.
class BlockRun {
 public:
  BlockRun(const FrameSource& source, std::vector<FrameSource::Cursor>& cursors,
           const GridSpec& grid, const Physics& physics, const std::vector<MapSource*>& workers,
           const FramePlan& plan, std::vector<std::unique_ptr<HostBuffer>>& buffers,
           FrameEngineReport& report, const FrameWrites& writes)
      : writes_(writes),
        source_(source),
        cursors_(cursors),
        grid_(grid),
        physics_(physics),
        workers_(workers),
        plan_(plan),
        buffers_(buffers),
        report_(report) {}

  /// Adds frames [from, K) to `acc` (planes [z0, z1)); frames before `compute_from` are only
  /// decoded (their times and fits are recorded), not computed.
  void run(std::int64_t z0, std::int64_t z1, std::vector<io::PlaneAccumulator>& acc,
           std::size_t from, std::size_t compute_from, io::FrameAccumulatorFile* file,
           ProgressSink* progress, double& evaluations_done) {
    z0_ = z0;
    z1_ = z1;
    compute_from_ = compute_from;
    from_ = from;
    next_ = std::max(from, compute_from);
    for (std::size_t b = 0; b < buffers_.size(); ++b) free_.push_back(b);
    std::vector<std::thread> threads;
    try {
      for (std::size_t t = 0; t < cursors_.size(); ++t)
        threads.push_back(
            start_thread([this, t] { guarded([this, t] { decode(t, cursors_[t]); }); }));
      for (std::size_t w = 0; w < workers_.size(); ++w)
        threads.push_back(start_thread([this, w] { guarded([this, w] { work(w); }); }));
      accumulate(acc, file, progress, evaluations_done);
    } catch (...) {
      fail(std::current_exception());
    }
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads) t.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void guarded(const std::function<void()>& body) {
    try {
      body();
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void fail(std::exception_ptr error) {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(error);
      stop_ = true;
    }
    changed_.notify_all();
  }

  /// Decoder t of D reads frames from_ + t, from_ + t + D, ... through its own cursor, each into
  /// a spare System (reused: no allocation per frame), at most `capacity` frames ahead of the
  /// next frame a worker takes, so the frame every worker waits for is always being decoded.
  void decode(std::size_t t, FrameSource::Cursor& cursor) {
    const std::size_t frames = source_.frames().size();
    const std::size_t decoders = cursors_.size();
    const std::size_t capacity = workers_.size() + decoders;
    for (std::size_t k = from_ + t; k < frames; k += decoders) {
      Item item;
      item.k = k;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || k < next_ + capacity; });
        if (stop_) return;
        if (!spares_.empty()) {
          item.atoms = std::move(spares_.back());
          spares_.pop_back();
        }
      }
      const auto start = SteadyClock::now();
      FrameFacts facts;
      source_.read(cursor, k, item.atoms, facts);
      item.grid = source_.frame_grid(grid_, item.atoms.cell);
      std::lock_guard lock(mutex_);
      report_.decode_seconds += seconds_since(start);
      report_.times_ps[k] = facts.time_ps;
      report_.fit_rmsd[k] = facts.fit_rmsd;
      report_.facts[k] = facts;
      report_.atoms_box.include(facts.box);
      if (k < compute_from_) {  // every plane of the block holds this frame already
        done_[k] = -1;
        spares_.push_back(std::move(item.atoms));
      } else {
        ready_.emplace(k, std::move(item));
      }
      changed_.notify_all();
    }
  }

  void work(std::size_t w) {
    MapSource& backend = *workers_[w];
    std::vector<StatsAccum> plane_stats(static_cast<std::size_t>(plan_.step));
    const std::size_t plane = grid_.plane_points();
    const std::size_t frames = source_.frames().size();
    for (;;) {
      std::size_t b = 0;
      Item item;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) return;
        b = free_.front();
        free_.pop_front();
        // Frames are taken in order: the next one once it is decoded.
        changed_.wait(lock, [&] { return stop_ || next_ >= frames || ready_.count(next_) > 0; });
        if (stop_) return;
        if (next_ >= frames) {  // no frame left
          free_.push_back(b);
          changed_.notify_all();
          return;
        }
        auto it = ready_.find(next_);
        item = std::move(it->second);
        ready_.erase(it);
        ++next_;
        changed_.notify_all();
      }
      const auto start = SteadyClock::now();
      backend.prepare(item.atoms, item.grid, physics_);
      float* out = buffers_[b]->data();
      for (std::int64_t z = z0_; z < z1_; z += plan_.step) {
        if (interrupt_requested()) return;  // the accumulator stops the block
        const Slab slab{z, std::min(plan_.step, z1_ - z)};
        backend.compute_slab(slab, out + static_cast<std::size_t>(z - z0_) * plane,
                             plane_stats.data());
      }
      std::lock_guard lock(mutex_);
      report_.worker_busy_seconds[w] += seconds_since(start);
      done_[item.k] = static_cast<std::ptrdiff_t>(b);
      spares_.push_back(std::move(item.atoms));
      changed_.notify_all();
    }
  }

  void checkpoint(std::vector<io::PlaneAccumulator>& acc, io::FrameAccumulatorFile* file) {
    if (file == nullptr) return;
    const auto start = SteadyClock::now();
    // The maps and plane sums of the frames counted below.
    if (writes_.maps != nullptr) writes_.maps->sync();
    if (writes_.profiles != nullptr) writes_.profiles->sync();
    for (std::size_t i = 0; i < acc.size(); ++i)
      if (acc[i].frames > 0) file->store(z0_ + static_cast<std::int64_t>(i), acc[i]);
    file->sync();
    report_.checkpoint_seconds += seconds_since(start);
  }

  void accumulate(std::vector<io::PlaneAccumulator>& acc, io::FrameAccumulatorFile* file,
                  ProgressSink* progress, double& evaluations_done) {
    const std::size_t frames = source_.frames().size();
    const std::size_t plane = grid_.plane_points();
    const double frame_evaluations = static_cast<double>(plane) * static_cast<double>(z1_ - z0_) *
                                     static_cast<double>(source_.selected_atoms());
    ThreadPool pool(std::min(8u, resolve_threads(0)));
    auto last_checkpoint = SteadyClock::now();
    for (std::size_t k = from_; k < frames; ++k) {
      std::ptrdiff_t b = -1;
      {
        std::unique_lock lock(mutex_);
        // Timed: a signal sets the interrupt flag without notifying.
        while (!stop_ && done_.count(k) == 0 && !interrupt_requested())
          changed_.wait_for(lock, std::chrono::milliseconds(100));
        if (stop_) break;                // another thread failed: keep what was added, then rethrow
        if (done_.count(k) == 0) break;  // interrupted
        b = done_[k];
        done_.erase(k);
      }
      if (b >= 0) {
        const auto start = SteadyClock::now();
        const float* values = buffers_[static_cast<std::size_t>(b)]->data();
        pool.parallel_for(acc.size(), [&](std::size_t begin, std::size_t end) {
          for (std::size_t i = begin; i < end; ++i)
            if (acc[i].frames == static_cast<std::int64_t>(k)) acc[i].add(values + i * plane);
        });
        report_.accumulate_seconds += seconds_since(start);
        if (writes_.maps != nullptr) writes_.maps->write(k, z0_, z1_ - z0_, values);
        if (writes_.profiles != nullptr) write_plane_sums(k, values, pool);
        ++report_.frames_computed;
        {
          std::lock_guard lock(mutex_);
          free_.push_back(static_cast<std::size_t>(b));
        }
        changed_.notify_all();
      } else {
        ++report_.frames_reused;
      }
      evaluations_done += frame_evaluations;
      if (progress != nullptr) progress->update(evaluations_done);
      if (interrupt_requested()) break;
      if (seconds_since(last_checkpoint) >= plan_.checkpoint_seconds) {
        checkpoint(acc, file);
        last_checkpoint = SteadyClock::now();
      }
    }
    // What an interrupted or failed block has added is kept too: every plane's statistics are
    // whole frames.
    checkpoint(acc, file);
    if (interrupt_requested()) throw InterruptedError("interrupted");
  }

  /// Frame k's plane_sums() of the block's planes (`values`), to the profile frames file.
  void write_plane_sums(std::size_t k, const float* values, ThreadPool& pool) {
    io::ProfileFramesFile& file = *writes_.profiles;
    const std::size_t width = file.width();
    const std::size_t plane = grid_.plane_points();
    const auto planes = static_cast<std::size_t>(z1_ - z0_);
    sums_.resize(planes * width);
    pool.parallel_for(planes, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i)
        plane_sums(file.grid_axis(), grid_, values + i * plane, sums_.data() + i * width);
    });
    file.write(k, z0_, z1_ - z0_, sums_.data());
  }

  const FrameWrites writes_;
  std::vector<double> sums_;  ///< write_plane_sums()' buffer
  const FrameSource& source_;
  std::vector<FrameSource::Cursor>& cursors_;  ///< one per decoding thread
  const GridSpec& grid_;
  const Physics& physics_;
  const std::vector<MapSource*>& workers_;
  const FramePlan& plan_;
  std::vector<std::unique_ptr<HostBuffer>>& buffers_;
  FrameEngineReport& report_;
  std::int64_t z0_ = 0, z1_ = 0;
  std::size_t from_ = 0, compute_from_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::size_t next_ = 0;               ///< the next frame a worker takes
  std::map<std::size_t, Item> ready_;  ///< decoded frames waiting for a worker
  std::vector<System> spares_;         ///< frames' atoms to decode into again
  std::deque<std::size_t> free_;
  std::map<std::size_t, std::ptrdiff_t> done_;  ///< frame -> its buffer (-1: not computed)
};

}  // namespace

double FrameEngineReport::busy_fraction() const {
  if (wall_seconds <= 0.0 || worker_busy_seconds.empty()) return 0.0;
  double busy = 0.0;
  for (const double s : worker_busy_seconds) busy += s;
  return busy / (wall_seconds * static_cast<double>(worker_busy_seconds.size()));
}

std::size_t decode_threads_for(std::size_t requested, std::size_t atoms, std::size_t budget) {
  if (requested > 0) return requested;
  const std::size_t frame_bytes = std::max<std::size_t>(atoms * sizeof(Atom), 1);
  const std::size_t fit = std::max<std::size_t>(budget / (8 * frame_bytes), 1);
  return std::clamp<std::size_t>(resolve_threads(0) / 2, 1, std::min<std::size_t>(8, fit));
}

std::size_t frame_plan_bytes(const GridSpec& grid, const FramePlan& plan) {
  const auto block_points = static_cast<std::size_t>(plan.block) * grid.plane_points();
  return block_points * (kStatisticsBytesPerPoint + plan.buffers * sizeof(float));
}

FramePlan make_frame_plan(const GridSpec& grid, std::int64_t z_begin, std::int64_t z_end,
                          std::size_t workers, std::int64_t multiple, std::size_t budget,
                          double checkpoint_seconds) {
  FramePlan plan;
  plan.z_begin = z_begin;
  plan.z_end = z_end;
  // Frames are added in order: a worker that finishes frame k+1 while frame k is still being
  // computed or added holds its buffer until then, so each worker gets two and the adding one.
  // (With one each, two workers of one H200 were 69 % busy at 1e6 atoms x 216^3.)
  plan.buffers = 2 * workers + 1;
  plan.checkpoint_seconds = checkpoint_seconds;
  const std::size_t per_plane =
      grid.plane_points() * (kStatisticsBytesPerPoint + plan.buffers * sizeof(float));
  const auto fit = static_cast<std::int64_t>(budget / std::max<std::size_t>(per_plane, 1));
  const std::int64_t planes = z_end - z_begin;
  multiple = std::max<std::int64_t>(multiple, 1);
  std::int64_t block = std::min(planes, fit / multiple * multiple);
  if (block < std::min(planes, multiple)) {
    block = std::min(planes, multiple);
    log().warn(
        "the memory limit holds fewer than {} plane(s) of frame statistics and buffers; using "
        "{} ({})",
        multiple, block, format_bytes(static_cast<std::size_t>(block) * per_plane));
  }
  plan.block = block;
  plan.step = block;  // one compute_slab() per frame and block: the backend's launch is filled
  return plan;
}

FrameEngineReport run_frame_engine(FrameSource& source, const GridSpec& grid,
                                   const Physics& physics, const std::vector<MapSource*>& workers,
                                   io::FrameAccumulatorFile* file, const FramePlan& plan,
                                   ProgressSink* progress, const std::string& label,
                                   const FrameWrites& writes) {
  const auto start = SteadyClock::now();
  FrameEngineReport report;
  const std::size_t frames = source.frames().size();
  report.times_ps.assign(frames, std::numeric_limits<double>::quiet_NaN());
  report.fit_rmsd.assign(frames, 0.0);
  report.facts.assign(frames, FrameFacts{});
  report.worker_busy_seconds.assign(workers.size(), 0.0);
  const std::size_t plane = grid.plane_points();
  std::vector<std::unique_ptr<HostBuffer>> buffers;
  for (std::size_t b = 0; b < plan.buffers && plan.z_end > plan.z_begin; ++b)
    buffers.push_back(workers.front()->allocate_host(static_cast<std::size_t>(plan.block) * plane));
  const double total = static_cast<double>(plane) * static_cast<double>(plan.z_end - plan.z_begin) *
                       static_cast<double>(source.selected_atoms()) * static_cast<double>(frames);
  if (progress != nullptr) progress->begin(label, total);
  double evaluations_done = 0.0;
  if (plan.z_end <= plan.z_begin) {  // no planes here (MPI ranks > planes): times and fits only
    System atoms;
    for (std::size_t k = 0; k < frames; ++k) {
      const auto read_start = SteadyClock::now();
      source.read(k, atoms, report.facts[k]);
      report.times_ps[k] = report.facts[k].time_ps;
      report.fit_rmsd[k] = report.facts[k].fit_rmsd;
      report.atoms_box.include(report.facts[k].box);
      report.decode_seconds += seconds_since(read_start);
    }
  }
  std::vector<FrameSource::Cursor> cursors;
  for (std::size_t t = 0; t < std::max<std::size_t>(plan.decoders, 1); ++t)
    cursors.push_back(source.cursor());
  report.decode_threads = cursors.size();
  bool first_block = true;
  for (std::int64_t z0 = plan.z_begin; z0 < plan.z_end; z0 += plan.block) {
    const std::int64_t z1 = std::min(plan.z_end, z0 + plan.block);
    std::vector<io::PlaneAccumulator> acc(static_cast<std::size_t>(z1 - z0));
    std::int64_t held = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t z = z0; z < z1; ++z) {
      io::PlaneAccumulator& a = acc[static_cast<std::size_t>(z - z0)];
      if (file == nullptr) {
        a.reset(plane);
      } else {
        file->load(z, a);
        if (a.frames > static_cast<std::int64_t>(frames))
          throw InternalError(
              fmt::format("{}: plane {} holds {} frames of {}", file->path(), z, a.frames, frames));
      }
      held = std::min(held, a.frames);
    }
    const auto compute_from = static_cast<std::size_t>(held);
    // The first block decodes every frame (their times and fits are recorded); later blocks
    // start at their first missing frame.
    const std::size_t from = first_block ? 0 : compute_from;
    evaluations_done += static_cast<double>(plane) * static_cast<double>(z1 - z0) *
                        static_cast<double>(source.selected_atoms()) * static_cast<double>(from);
    if (from >= frames) {
      report.frames_reused += frames;
      continue;
    }
    BlockRun block(source, cursors, grid, physics, workers, plan, buffers, report, writes);
    block.run(z0, z1, acc, from, compute_from, file, progress, evaluations_done);
    first_block = false;
  }
  if (progress != nullptr) progress->end();
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace dcs::pipeline
