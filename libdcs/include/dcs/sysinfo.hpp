// How much memory this process may use: the machine's memory and the cgroup (v1 and v2) limits
// of a container or batch job, whichever is tighter.
//
// A container with a 2 GiB limit on a 512 GiB host sees 512 GiB in /proc/meminfo and sysconf;
// an allocation past its cgroup limit is answered by the OOM killer (exit 137), not by
// bad_alloc. So every memory pre-flight check asks here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace dcs {

/// Bytes this process can still allocate without swapping or being OOM-killed:
/// the minimum of MemAvailable (/proc/meminfo) and, for the process's cgroup and each of its
/// ancestors, limit − usage, where usage excludes the reclaimable inactive page cache
/// (cgroup v2: memory.max − (memory.current − inactive_file); v1: memory.limit_in_bytes −
/// (memory.usage_in_bytes − total_inactive_file)). 0 when nothing could be read.
/// Reads a few small files under /proc and /sys/fs/cgroup on every call (no caching).
/// This machine's host name ("unknown" when it cannot be read).
std::string host_name();

std::size_t available_memory_bytes() noexcept;

/// The memory this process may use in total: the tightest cgroup limit of its cgroup and its
/// ancestors, or the physical memory (MemTotal) when that is smaller or no limit is set.
/// 0 when nothing could be read.
std::size_t memory_limit_bytes() noexcept;

/// What ulimit -v (RLIMIT_AS) leaves this process to map: the limit less its size now; 0 when
/// unlimited or unknown. An allocation past it fails however much memory the machine has.
std::size_t address_space_left_bytes() noexcept;

/// What the two functions above are computed from; read_memory_info() is the seam the tests
/// use (they point `root` at a directory holding fake proc/ and sys/ files).
struct MemoryInfo {
  std::optional<std::size_t> mem_total;      ///< MemTotal (or sysconf) in bytes
  std::optional<std::size_t> mem_available;  ///< MemAvailable in bytes
  std::optional<std::size_t> cgroup_limit;   ///< tightest limit on the cgroup path; none: unlimited
  std::optional<std::size_t> cgroup_available;  ///< min over the cgroup path of limit − usage
  std::string cgroup_dir;                       ///< the directory that set cgroup_limit (messages)

  /// min(mem_available, cgroup_available) over what is known; 0 when neither is.
  std::size_t available() const noexcept;
  /// min(mem_total, cgroup_limit) over what is known; 0 when neither is.
  std::size_t limit() const noexcept;
};

/// Reads meminfo, /proc/self/cgroup and /proc/self/mountinfo below `root` ("/" for the real
/// system) and the cgroup memory files of the process's cgroup and its ancestors, for cgroup v1
/// (a "cgroup" mount with the memory controller) and v2 (a "cgroup2" mount), both when present
/// (hybrid hosts). Without usable mountinfo, /sys/fs/cgroup (v2) and /sys/fs/cgroup/memory (v1)
/// are tried. A cgroup path that does not exist below its mount (a container without a cgroup
/// namespace sees the host's path) falls back to the mount point itself. v1's "unlimited"
/// (a value ≥ 2^62) and v2's "max" mean no limit. Missing or unreadable files mean "unknown".
/// When `root` is "/", a missing MemTotal falls back to sysconf.
MemoryInfo read_memory_info(const std::filesystem::path& root = "/") noexcept;

}  // namespace dcs
