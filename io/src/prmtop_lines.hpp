// The PRMTOP parser on a line source (prmtop.cpp): parse_prmtop() feeds it a stream,
// read_topology() the file it reads once for its SHA-256 too.
#pragma once

#include <string>

#include "dcs/types.hpp"
#include "line_source.hpp"

namespace dcs::io::detail {

System parse_prmtop_lines(LineSource& source, const std::string& name);

}  // namespace dcs::io::detail
