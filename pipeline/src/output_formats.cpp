// The output-format table (output_formats.hpp).
#include "output_formats.hpp"

#include <array>
#include <memory>
#include <string>

#include "dcs/io/mrc.hpp"
#include "dcs/io/opendx_sink.hpp"

namespace dcs::pipeline {
namespace {

std::string on_off(bool on) { return on ? "on" : "off"; }

const std::string& hdf5_path(const OutputRequest& output) { return output.hdf5_path; }

constexpr std::array<OutputFormat, 3> kFormats{{
    {"the HDF5 output", "the HDF5 file", &OutputPaths::h5, true,
     [](const OutputRequest& o) { return o.write_hdf5; }, hdf5_path,
     [](const OutputRequest&) { return ".h5"; }, "--no-hdf5",
     [](const OutputRequest& o) { return on_off(!o.write_hdf5); }, nullptr, nullptr, nullptr},
    {"the OpenDX output", "the OpenDX file", &OutputPaths::dx, false,
     [](const OutputRequest& o) { return o.write_dx; },
     [](const OutputRequest& o) -> const std::string& { return o.dx_path; },
     [](const OutputRequest& o) { return o.dx_gzip ? ".dx.gz" : ".dx"; }, "--dx",
     [](const OutputRequest& o) {
       return o.write_dx ? o.dx_path + (o.dx_gzip ? " (gzip)" : "") : std::string("off");
     },
     [](const OutputRequest& o, const GridSpec& grid, const std::string& path) -> std::uint64_t {
       // gzip: about 4 bytes a value; text: 14
       return o.dx_gzip || path.ends_with(".gz") ? grid.points() * 4 : grid.points() * 14;
     },
     [](const OutputRequest& o, const std::string& path, bool force,
        std::size_t budget) -> std::unique_ptr<MapSink> {
       return std::make_unique<io::OpenDxSink>(
           path, io::OpenDxOptions{.force = force, .gzip = o.dx_gzip}, budget / 4);
     },
     [](const GridSpec& grid, std::size_t budget) {
       return io::OpenDxSink::memory_for(grid, budget / 4);
     }},
    {"the MRC output", "the MRC file", &OutputPaths::mrc, false,
     [](const OutputRequest& o) { return o.write_mrc; },
     [](const OutputRequest& o) -> const std::string& { return o.mrc_path; },
     [](const OutputRequest&) { return ".mrc"; }, "--mrc",
     [](const OutputRequest& o) { return o.write_mrc ? o.mrc_path : std::string("off"); },
     [](const OutputRequest&, const GridSpec& grid, const std::string&) -> std::uint64_t {
       return grid.points() * sizeof(float) + io::kMrcHeaderBytes;
     },
     // Streamed: takes every slab in z order, holds none.
     [](const OutputRequest&, const std::string& path, bool force, std::size_t)
         -> std::unique_ptr<MapSink> { return std::make_unique<io::MrcSink>(path, force); },
     [](const GridSpec&, std::size_t) -> std::size_t { return 0; }},
}};

}  // namespace

std::span<const OutputFormat> output_formats() { return kFormats; }

}  // namespace dcs::pipeline
