// Values at points as CSV (dcs/io/point_table.hpp); the HDF5 table is in point_table_hdf5.cpp.
#include "dcs/io/point_table.hpp"

#include <charconv>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "point_table_check.hpp"

namespace dcs::io {
namespace detail {

void check_point_table(const PointTable& table, const char* writer) {
  const std::size_t n = table.positions.size();
  const auto check = [&](std::size_t size, const char* what) {
    if (size != n)
      throw InternalError(fmt::format("{}: {} {} for {} positions", writer, size, what, n));
  };
  check(table.values.size(), "values");
  if (!table.normals.empty()) check(table.normals.size(), "normals");
  if (!table.surface_positions.empty()) check(table.surface_positions.size(), "surface positions");
}

}  // namespace detail

namespace {

template <class T>
void put_number(std::string& out, T value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

void put_row(std::string& out, const Vec3& v) {
  for (const double c : v) {
    out += ',';
    put_number(out, c);
  }
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

}  // namespace

void write_point_csv(const std::string& path, const PointTable& table, bool force) {
  detail::check_point_table(table, "write_point_csv");
  AtomicFile file(path, force);
  std::string out;
  out += "# dcs: electrostatic potential at points (x, y, z in angstrom)\n";
  if (!table.unit.empty()) out += "# unit: " + one_line(table.unit) + "\n";
  for (const auto& [key, value] : table.attributes)
    out += "# " + one_line(key) + ": " + one_line(value) + "\n";
  out += "x,y,z,potential";
  if (!table.normals.empty()) out += ",nx,ny,nz";
  if (!table.surface_positions.empty()) out += ",surface_x,surface_y,surface_z";
  out += '\n';
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  for (std::size_t i = 0; i < table.positions.size(); ++i) {
    const Vec3& p = table.positions[i];
    put_number(out, p[0]);
    out += ',';
    put_number(out, p[1]);
    out += ',';
    put_number(out, p[2]);
    out += ',';
    put_number(out, table.values[i]);
    if (!table.normals.empty()) put_row(out, table.normals[i]);
    if (!table.surface_positions.empty()) put_row(out, table.surface_positions[i]);
    out += '\n';
    if (out.size() >= kBlock) {
      file.write(out.data(), out.size());
      out.clear();
    }
  }
  file.write(out.data(), out.size());
  file.commit();
}

}  // namespace dcs::io
