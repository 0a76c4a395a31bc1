// A check of one XTC frame's compressed coordinates before chemfiles decodes them
// (trajectory.cpp). chemfiles' decoder (xdrfile's, in chemfiles/src/files/XDRFile.cpp) trusts
// the data: it reads bits past the frame's compressed bytes, indexes its table of "magic
// integers" past its end and divides by a size of zero when the data say so, and a corrupt
// frame crashed it under the fuzzer (fuzz_trajectory). This walks the same bit stream with
// every read bounded, without computing coordinates, and refuses a frame that would leave it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dcs::io::detail {

/// The offsets of every frame of an XTC file (walked by guard_trajectory_file): the check
/// needs them to find a frame's bytes.
struct XtcFrames {
  std::vector<std::uint64_t> offsets;  ///< start of each frame, plus the file size at the end
};

/// Throws InputError "<path>: frame <frame>: corrupt compressed coordinates (...)" unless frame
/// `frame` of `path` (at frames.offsets[frame]) decodes within its bytes for `atoms` atoms.
void check_xtc_frame(const std::string& path, const XtcFrames& frames, std::size_t frame,
                     std::size_t atoms);

}  // namespace dcs::io::detail
