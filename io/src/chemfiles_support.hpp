// What the chemfiles-based readers (topology_chemfiles.cpp, trajectory.cpp) share: chemfiles'
// warnings routed to dcs's log. chemfiles headers stay in io/src: no public header includes them.
#pragma once

namespace dcs::io::detail {

/// Sends chemfiles' warnings (e.g. "unknown unit for time") to dcs::log() at warn level, once
/// per process; call before any chemfiles use.
void route_chemfiles_warnings();

}  // namespace dcs::io::detail
