// Private to point_table*.cpp: the sizes of a PointTable's vectors agree.
#pragma once

#include "dcs/io/point_table.hpp"

namespace dcs::io::detail {

/// InternalError naming `writer` when values, normals or surface positions are not one per
/// position.
void check_point_table(const PointTable& table, const char* writer);

}  // namespace dcs::io::detail
