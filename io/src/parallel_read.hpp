// The parallel reader of regular PQR and xyzq files: the file's bytes, held whole, are cut at
// line boundaries into chunks that are parsed on several threads and joined in file order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "atom_parsers.hpp"
#include "dcs/types.hpp"

namespace dcs::io::detail {

/// How a file's bytes are read in parallel.
struct ParallelRead {
  unsigned threads = 0;         ///< 0: all hardware threads
  std::size_t chunk_bytes = 0;  ///< 0: automatic (about 4 chunks a thread, at least 1 MiB)
};

/// The models of PQR bytes, as parse_pqr_lines() gives them for the same bytes.
std::vector<System> parse_pqr_bytes(const std::vector<char>& bytes, const std::string& name,
                                    const ModelRead& how, const ParallelRead& parallel);

/// The atoms of xyzq bytes, as parse_xyzq_lines() gives them for the same bytes.
System parse_xyzq_bytes(const std::vector<char>& bytes, const std::string& name,
                        const ParallelRead& parallel);

}  // namespace dcs::io::detail
