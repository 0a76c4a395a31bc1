// The slab engine (dcs/pipeline/engine.hpp): workers compute slabs into a bounded pool of
// buffers while the writer stores them in z order and feeds the sinks.
#include "dcs/pipeline/engine.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/timer.hpp"

namespace dcs::pipeline {
namespace {

/// A computed slab waiting for the writer.
struct Finished {
  std::size_t buffer = 0;
  std::vector<StatsAccum> plane_stats;
};

/// The state shared by the workers and the writer, under one mutex: the free buffers, the next
/// slab to hand out, the finished slabs, and the first error.
///
/// A resumed run whose sinks want the slabs already in the store has the writer borrow a buffer
/// to read each of them back, in z order, between slabs the workers compute. Workers hand their
/// buffers back only through the writer, so if they held every buffer for slabs past a
/// read-back slab, the writer could never reach them: a deadlock. So a worker leaves one buffer
/// free while a read-back slab lies between the writer and the slab it would take
/// (`last_read_back_before`), and the writer says how far it has come (`advance`).
class Shared {
 public:
  /// last_read_back_before[s]: the highest slab index below s that the writer will read back,
  /// or -1; empty when nothing is read back.
  Shared(std::size_t buffers, std::vector<std::size_t> todo, SlabSource* source,
         std::vector<std::ptrdiff_t> last_read_back_before = {})
      : todo_(std::move(todo)),
        source_(source),
        last_read_back_before_(std::move(last_read_back_before)) {
    for (std::size_t b = 0; b < buffers; ++b) free_.push_back(b);
  }

  /// A worker's next (slab index, buffer), or false when there is nothing left or the run stops.
  bool take(std::size_t& slab, std::size_t& buffer) {
    std::unique_lock lock(mutex_);
    if (source_ != nullptr) {
      changed_.wait(lock, [&] { return stop_ || exhausted_ || !free_.empty(); });
      if (stop_ || exhausted_) return false;
      const std::optional<std::size_t> next = source_->next();  // under the lock: in order
      if (!next) {
        exhausted_ = true;
        lock.unlock();
        changed_.notify_all();
        return false;
      }
      buffer = free_.back();
      free_.pop_back();
      slab = *next;
      taken_.push_back(slab);
      lock.unlock();
      changed_.notify_all();
      return true;
    }
    changed_.wait(lock, [&] {
      return stop_ || next_ >= todo_.size() || free_.size() > kept_for_writer(todo_[next_]);
    });
    if (stop_ || next_ >= todo_.size()) return false;
    buffer = free_.back();
    free_.pop_back();
    slab = todo_[next_++];
    return true;
  }

  /// With a source: the writer waits for the k-th slab handed out (in hand-out order). Returns
  /// 1 with it, 0 when every handed-out slab was written and the source is exhausted, -1 when
  /// the run stops.
  int wait_for_taken(std::size_t k, std::size_t& slab, Finished& out) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] {
      return stop_ || (k < taken_.size() && done_.count(taken_[k]) != 0) ||
             (exhausted_ && k >= taken_.size());
    });
    if (stop_) return -1;
    if (k >= taken_.size()) return 0;
    slab = taken_[k];
    const auto found = done_.find(slab);
    out = std::move(found->second);
    done_.erase(found);
    return 1;
  }

  void finished(std::size_t slab, Finished result) {
    {
      const std::lock_guard lock(mutex_);
      done_.emplace(slab, std::move(result));
    }
    changed_.notify_all();
  }

  /// The writer waits for slab `slab`; false when the run stops first.
  bool wait_for(std::size_t slab, Finished& out) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop_ || done_.count(slab) != 0; });
    if (stop_) return false;
    const auto found = done_.find(slab);
    out = std::move(found->second);
    done_.erase(found);
    return true;
  }

  /// The writer has handled every slab below `slab_end`.
  void advance(std::size_t slab_end) {
    {
      const std::lock_guard lock(mutex_);
      writer_at_ = slab_end;
    }
    changed_.notify_all();
  }

  /// The writer borrows a free buffer (to read back a slab for the sinks).
  bool borrow(std::size_t& buffer) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
    if (stop_) return false;
    buffer = free_.back();
    free_.pop_back();
    return true;
  }

  void release(std::size_t buffer) {
    {
      const std::lock_guard lock(mutex_);
      free_.push_back(buffer);
    }
    changed_.notify_all();
  }

  void fail(std::exception_ptr error) {
    {
      const std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(error);
      stop_ = true;
    }
    changed_.notify_all();
  }
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
  }
  std::exception_ptr error() {
    const std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  /// Buffers a worker must leave free before taking `slab`: one while the writer still has a
  /// slab to read back below it.
  std::size_t kept_for_writer(std::size_t slab) const {
    if (last_read_back_before_.empty()) return 0;
    return last_read_back_before_[slab] >= static_cast<std::ptrdiff_t>(writer_at_) ? 1 : 0;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::size_t> free_;
  std::vector<std::size_t> todo_;
  std::size_t next_ = 0;
  std::map<std::size_t, Finished> done_;
  std::exception_ptr error_;
  bool stop_ = false;
  SlabSource* source_ = nullptr;
  std::vector<std::size_t> taken_;  // with a source: slabs handed out, in order
  bool exhausted_ = false;
  std::vector<std::ptrdiff_t> last_read_back_before_;
  std::size_t writer_at_ = 0;
};

}  // namespace

std::size_t plan_bytes(const GridSpec& grid, const MapPlan& plan) {
  return plan.buffers * static_cast<std::size_t>(std::min(plan.step, grid.nz())) *
         grid.plane_points() * sizeof(float);
}

double EngineReport::busy_fraction() const {
  if (worker_busy_seconds.empty() || wall_seconds <= 0.0) return 0.0;
  double busy = 0.0;
  for (const double seconds : worker_busy_seconds) busy += seconds;
  return busy / (wall_seconds * static_cast<double>(worker_busy_seconds.size()));
}

namespace {

/// One run of the engine: the slabs, the buffer pool, the workers' threads and the writer.
class EngineRun {
 public:
  EngineRun(const GridSpec& grid, const std::vector<MapSource*>& workers, const MapPlan& plan,
            io::SlabStore* store, const std::vector<MapSink*>& sinks, ProgressSink* progress,
            std::size_t atoms, SlabSource* source)
      : grid_(grid),
        workers_(workers),
        plan_(plan),
        store_(store),
        sinks_(sinks),
        progress_(progress),
        source_(source),
        per_plane_(static_cast<double>(grid.plane_points()) * static_cast<double>(atoms)) {
    const std::int64_t nz = grid.nz();
    for (std::int64_t z = 0; z < nz; z += plan.step)
      slabs_.push_back({z, std::min(plan.step, nz - z)});
    report_.plane_stats.assign(static_cast<std::size_t>(nz), StatsAccum{});
    report_.worker_busy_seconds.assign(workers.size(), 0.0);
    find_done_slabs();
    for (MapSink* sink : sinks) feed_done_slabs_ = feed_done_slabs_ || sink->wants_done_slabs();
    // The pool: only as many buffers as can be in use at once.
    const std::size_t buffers = std::min(plan.buffers, std::max<std::size_t>(1, slabs_.size()));
    const std::size_t slab_floats =
        static_cast<std::size_t>(std::min(plan.step, nz)) * grid.plane_points();
    for (std::size_t b = 0; b < buffers; ++b)
      pool_.push_back(workers.front()->allocate_host(slab_floats));
    shared_.emplace(buffers, todo_, source, read_back_order());
  }

  EngineReport run(const std::string& label) {
    const auto start = SteadyClock::now();
    if (progress_) progress_->begin(label, per_plane_ * static_cast<double>(grid_.nz()));
    start_workers();
    try {
      if (store_ != nullptr && !todo_.empty()) {  // while the workers start their first slabs
        const auto write_start = SteadyClock::now();
        store_->before_first_slab();
        report_.write_seconds += seconds_since(write_start);
      }
      last_checkpoint_ = SteadyClock::now();
      if (source_ != nullptr) write_handed_out();
      else write_in_order();
    } catch (...) {
      shared_->fail(std::current_exception());
    }
    shared_->stop();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
    if (progress_) progress_->end();
    if (std::exception_ptr error = shared_->error()) std::rethrow_exception(error);
    if (interrupt_requested()) throw InterruptedError("interrupted");
    if (store_ != nullptr) {
      const auto write_start = SteadyClock::now();
      store_->finish_writes();
      report_.write_seconds += seconds_since(write_start);
    }
    report_.wall_seconds = seconds_since(start);
    return std::move(report_);
  }

 private:
  /// A slab is done when the store holds every plane of it (a resumed run).
  void find_done_slabs() {
    done_.assign(slabs_.size(), false);
    for (std::size_t s = 0; s < slabs_.size(); ++s) {
      bool all = store_ != nullptr;
      for (std::int64_t z = slabs_[s].z_begin; all && z < slabs_[s].z_begin + slabs_[s].z_count;
           ++z)
        all = store_->plane_done()[static_cast<std::size_t>(z)] != 0;
      done_[s] = all;
      if (!all) todo_.push_back(s);
    }
  }

  /// For Shared: the last slab below each one that the writer reads back (see Shared).
  std::vector<std::ptrdiff_t> read_back_order() const {
    std::vector<std::ptrdiff_t> last_read_back_before;
    if (feed_done_slabs_ && source_ == nullptr && todo_.size() < slabs_.size()) {
      last_read_back_before.assign(slabs_.size(), -1);
      for (std::size_t s = 1; s < slabs_.size(); ++s)
        last_read_back_before[s] =
            done_[s - 1] ? static_cast<std::ptrdiff_t>(s - 1) : last_read_back_before[s - 1];
    }
    return last_read_back_before;
  }

  void start_workers() {
    threads_.reserve(workers_.size());
    try {
      for (std::size_t w = 0; w < workers_.size(); ++w)
        threads_.push_back(start_thread([this, w] { work(w); }));
    } catch (...) {
      shared_->stop();
      for (std::thread& t : threads_) t.join();
      throw;
    }
  }

  /// A worker's loop: the next slab into a free buffer, until none is left or the run stops.
  void work(std::size_t w) {
    try {
      std::size_t s = 0, b = 0;
      while (shared_->take(s, b)) {
        if (interrupt_requested()) {
          shared_->release(b);
          shared_->stop();
          return;
        }
        Finished result;
        result.buffer = b;
        result.plane_stats.resize(static_cast<std::size_t>(slabs_[s].z_count));
        const auto busy_start = SteadyClock::now();
        workers_[w]->compute_slab(slabs_[s], pool_[b]->data(), result.plane_stats.data());
        report_.worker_busy_seconds[w] += seconds_since(busy_start);
        shared_->finished(s, std::move(result));
      }
    } catch (...) {
      shared_->fail(std::current_exception());
    }
  }

  void checkpoint_if_due() {
    if (store_ != nullptr && seconds_since(last_checkpoint_) >= plan_.checkpoint_seconds) {
      store_->checkpoint();
      last_checkpoint_ = SteadyClock::now();
    }
  }

  void wrote(const Slab& slab, const Finished& result) {
    std::copy(result.plane_stats.begin(), result.plane_stats.end(),
              report_.plane_stats.begin() + slab.z_begin);
    planes_written_ += static_cast<double>(slab.z_count);
  }

  /// With a source: this process's slabs, in the order they were handed out.
  void write_handed_out() {
    for (std::size_t k = 0;; ++k) {
      if (interrupt_requested()) throw InterruptedError("interrupted");
      std::size_t s = 0;
      Finished result;
      const auto wait_start = SteadyClock::now();
      const int got = shared_->wait_for_taken(k, s, result);
      report_.writer_wait_seconds += seconds_since(wait_start);
      if (got <= 0) break;
      ++report_.slabs_computed;
      const Slab& slab = slabs_[s];
      const auto write_start = SteadyClock::now();
      if (store_ != nullptr) {
        store_->write_slab(slab, pool_[result.buffer]->data(), result.plane_stats.data());
        checkpoint_if_due();
      }
      wrote(slab, result);
      report_.write_seconds += seconds_since(write_start);
      shared_->release(result.buffer);
      if (progress_) progress_->update(per_plane_ * planes_written_);
    }
  }

  /// A done slab's statistics, and its values read back when a sink wants them; false when the
  /// run stops.
  bool read_back(const Slab& slab, Finished& result) {
    ++report_.slabs_reused;
    const auto first = store_->plane_stats().begin() + slab.z_begin;
    result.plane_stats.assign(first, first + slab.z_count);
    if (!feed_done_slabs_) return true;
    const auto wait_start = SteadyClock::now();
    if (!shared_->borrow(result.buffer)) return false;
    report_.writer_wait_seconds += seconds_since(wait_start);
    store_->read_planes(slab, pool_[result.buffer]->data());
    return true;
  }

  /// Every slab in z order: computed ones into the store and the sinks, done ones (a resumed
  /// run) read back for the sinks that want them.
  void write_in_order() {
    for (std::size_t s = 0; s < slabs_.size(); ++s) {
      const Slab& slab = slabs_[s];
      if (interrupt_requested()) throw InterruptedError("interrupted");
      Finished result;
      if (done_[s]) {
        if (!read_back(slab, result)) break;
      } else {
        const auto wait_start = SteadyClock::now();
        if (!shared_->wait_for(s, result)) break;
        report_.writer_wait_seconds += seconds_since(wait_start);
        ++report_.slabs_computed;
      }
      const auto write_start = SteadyClock::now();
      const bool have_values = !done_[s] || feed_done_slabs_;
      const float* values = have_values ? pool_[result.buffer]->data() : nullptr;
      if (!done_[s] && store_ != nullptr)
        store_->write_slab(slab, values, result.plane_stats.data());
      if (have_values)
        for (MapSink* sink : sinks_)
          if (sink->wants_slabs()) sink->write_slab(slab, values, result.plane_stats.data());
      wrote(slab, result);
      checkpoint_if_due();
      report_.write_seconds += seconds_since(write_start);
      if (have_values) shared_->release(result.buffer);
      shared_->advance(s + 1);
      if (progress_) progress_->update(per_plane_ * planes_written_);
    }
  }

  const GridSpec& grid_;
  const std::vector<MapSource*>& workers_;
  const MapPlan& plan_;
  io::SlabStore* store_;
  const std::vector<MapSink*>& sinks_;
  ProgressSink* progress_;
  SlabSource* source_;
  double per_plane_;
  std::vector<Slab> slabs_;
  std::vector<bool> done_;
  std::vector<std::size_t> todo_;
  bool feed_done_slabs_ = false;
  std::vector<std::unique_ptr<HostBuffer>> pool_;
  std::optional<Shared> shared_;
  std::vector<std::thread> threads_;
  EngineReport report_;
  SteadyClock::time_point last_checkpoint_;
  double planes_written_ = 0.0;
};

}  // namespace

EngineReport run_engine(const GridSpec& grid, const std::vector<MapSource*>& workers,
                        const MapPlan& plan, io::SlabStore* store,
                        const std::vector<MapSink*>& sinks, ProgressSink* progress,
                        const std::string& label, std::size_t atoms, SlabSource* source) {
  if (workers.empty()) throw InternalError("the map engine needs a worker");
  if (source != nullptr && !sinks.empty())
    throw InternalError("a map shared between processes has no sinks");
  if (plan.step < 1 || plan.buffers < 1)
    throw InternalError("the map plan needs a step and a buffer");
  return EngineRun(grid, workers, plan, store, sinks, progress, atoms, source).run(label);
}

}  // namespace dcs::pipeline
