// The base of an output written whole when the map is finished, beside the map (the profile CSV,
// a trajectory's structure): no slabs, the text under a temporary name, committed with the map's
// other outputs and removed on failure, as the DX file is.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "dcs/io/atomic_file.hpp"
#include "dcs/map_sink.hpp"

namespace dcs::pipeline {

class TextFileSink : public MapSink {
 public:
  std::string name() const override { return path_; }
  bool wants_slabs() const override { return false; }
  void begin(const MapMetadata&) override {}
  void write_slab(const Slab&, const float*, const StatsAccum*) override {}
  void sync() override { file_->sync(); }
  void commit() override { file_->commit(); }
  void abort() noexcept override {
    if (file_) file_->discard();
  }

 protected:
  TextFileSink(std::string path, bool force) : path_(std::move(path)), force_(force) {}
  const std::string& path() const { return path_; }
  /// Opens the file under its temporary name and writes `parts` in order (finish() calls it).
  void write_file(std::initializer_list<std::string_view> parts) {
    file_ = std::make_unique<io::AtomicFile>(path_, force_);
    for (const std::string_view part : parts) file_->write(part.data(), part.size());
  }

 private:
  std::string path_;
  bool force_;
  std::unique_ptr<io::AtomicFile> file_;
};

}  // namespace dcs::pipeline
