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

const std::string& hdf5_path(const RunConfig& config) { return config.output.hdf5_path; }

constexpr std::array<OutputFormat, 3> kFormats{{
    {"the HDF5 output", "the HDF5 file", &OutputPaths::h5, true,
     [](const RunConfig& c) { return c.output.write_hdf5; }, hdf5_path,
     [](const RunConfig&) { return ".h5"; }, "--no-hdf5",
     [](const RunConfig& c) { return on_off(!c.output.write_hdf5); }, nullptr, nullptr, nullptr},
    {"the OpenDX output", "the OpenDX file", &OutputPaths::dx, false,
     [](const RunConfig& c) { return c.output.write_dx; },
     [](const RunConfig& c) -> const std::string& { return c.output.dx_path; },
     [](const RunConfig& c) { return c.output.dx_gzip ? ".dx.gz" : ".dx"; }, "--dx",
     [](const RunConfig& c) {
       return c.output.write_dx ? c.output.dx_path + (c.output.dx_gzip ? " (gzip)" : "")
                                : std::string("off");
     },
     [](const RunConfig& c, const GridSpec& grid, const std::string& path) -> std::uint64_t {
       // gzip: about 4 bytes a value; text: 14
       return c.output.dx_gzip || path.ends_with(".gz") ? grid.points() * 4 : grid.points() * 14;
     },
     [](const RunConfig& c, const std::string& path, bool force,
        std::size_t budget) -> std::unique_ptr<MapSink> {
       return std::make_unique<io::OpenDxSink>(
           path, io::OpenDxOptions{.force = force, .gzip = c.output.dx_gzip}, budget / 4);
     },
     [](const GridSpec& grid, std::size_t budget) {
       return io::OpenDxSink::memory_for(grid, budget / 4);
     }},
    {"the MRC output", "the MRC file", &OutputPaths::mrc, false,
     [](const RunConfig& c) { return c.output.write_mrc; },
     [](const RunConfig& c) -> const std::string& { return c.output.mrc_path; },
     [](const RunConfig&) { return ".mrc"; }, "--mrc",
     [](const RunConfig& c) { return c.output.write_mrc ? c.output.mrc_path : std::string("off"); },
     [](const RunConfig&, const GridSpec& grid, const std::string&) -> std::uint64_t {
       return grid.points() * sizeof(float) + io::kMrcHeaderBytes;
     },
     // Streamed: takes every slab in z order, holds none.
     [](const RunConfig&, const std::string& path, bool force, std::size_t)
         -> std::unique_ptr<MapSink> { return std::make_unique<io::MrcSink>(path, force); },
     [](const GridSpec&, std::size_t) -> std::size_t { return 0; }},
}};

}  // namespace

std::span<const OutputFormat> output_formats() { return kFormats; }

}  // namespace dcs::pipeline
