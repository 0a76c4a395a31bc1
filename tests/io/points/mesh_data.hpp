// The path of a mesh file of tests/data/mesh (DCS_MESH_DATA_DIR), shared by the mesh tests.
#pragma once

#include <string>

inline std::string mesh_data(const std::string& name) {
  return std::string(DCS_MESH_DATA_DIR) + "/" + name;
}
