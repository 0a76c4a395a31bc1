#include "dcs/sysinfo.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace dcs {

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}
namespace {

namespace fs = std::filesystem;

// cgroup v1 writes "unlimited" as LONG_MAX rounded down to a page (9223372036854771712).
constexpr std::size_t kUnlimitedThreshold = std::size_t{1} << 62;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<std::size_t> parse_size(std::string_view text) {
  text = trim(text);
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    const auto end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? text.npos : end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return parts;
}

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto begin = text.find_first_not_of(" \t", pos);
    if (begin == std::string_view::npos) break;
    auto end = text.find_first_of(" \t", begin);
    if (end == std::string_view::npos) end = text.size();
    parts.push_back(text.substr(begin, end - begin));
    pos = end;
  }
  return parts;
}

/// "Key:   123 kB" lines of /proc/meminfo; the value in bytes.
std::optional<std::size_t> meminfo_field(const std::string& meminfo, std::string_view key) {
  for (std::string_view line : split(meminfo, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || line.substr(0, colon) != key) continue;
    auto fields = split_spaces(line.substr(colon + 1));
    if (fields.empty()) return std::nullopt;
    const auto value = parse_size(fields[0]);
    if (!value) return std::nullopt;
    const bool kibibytes = fields.size() > 1 && fields[1] == "kB";
    return kibibytes ? *value * 1024 : *value;
  }
  return std::nullopt;
}

/// "key value" lines of a cgroup memory.stat.
std::optional<std::size_t> stat_field(const fs::path& file, std::string_view key) {
  const auto text = read_text(file);
  if (!text) return std::nullopt;
  for (std::string_view line : split(*text, '\n')) {
    auto fields = split_spaces(line);
    if (fields.size() == 2 && fields[0] == key) return parse_size(fields[1]);
  }
  return std::nullopt;
}

/// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount_path(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      const std::string_view digits = text.substr(i + 1, 3);
      if (digits.size() == 3 &&
          std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out +=
            static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

struct CgroupMount {
  std::string root;         ///< the mount's root inside the hierarchy (mountinfo field 4)
  std::string mount_point;  ///< where it is mounted (field 5)
};

/// The cgroup2 mount (v2 = true) or the cgroup v1 mount holding the memory controller.
std::optional<CgroupMount> find_mount(const std::string& mountinfo, bool v2) {
  for (std::string_view line : split(mountinfo, '\n')) {
    const auto fields = split_spaces(line);
    const auto dash = std::find(fields.begin(), fields.end(), std::string_view("-"));
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 3) continue;
    const std::string_view fstype = dash[1];
    if (v2 ? fstype != "cgroup2" : fstype != "cgroup") continue;
    if (!v2) {
      const auto options = split(dash[3], ',');
      if (std::find(options.begin(), options.end(), std::string_view("memory")) == options.end())
        continue;
    }
    return CgroupMount{unescape_mount_path(fields[3]), unescape_mount_path(fields[4])};
  }
  return std::nullopt;
}

/// The process's path in the v2 hierarchy ("0::/path") or the v1 memory hierarchy
/// ("N:controller,memory,...:/path").
std::optional<std::string> cgroup_path(const std::string& self_cgroup, bool v2) {
  for (std::string_view line : split(self_cgroup, '\n')) {
    const auto first = line.find(':');
    if (first == std::string_view::npos) continue;
    const auto second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string path(trim(line.substr(second + 1)));
    if (v2) {
      if (id == "0" && controllers.empty()) return path;
    } else {
      const auto names = split(controllers, ',');
      if (std::find(names.begin(), names.end(), std::string_view("memory")) != names.end())
        return path;
    }
  }
  return std::nullopt;
}

fs::path below_root(const fs::path& root, const std::string& absolute) {
  return root / fs::path(absolute).relative_path();
}

struct Hierarchy {
  fs::path mount;  ///< the mount point, below root
  fs::path leaf;   ///< the process's cgroup directory, below root (mount or a descendant)
};

std::optional<Hierarchy> locate(const fs::path& root, bool v2) {
  const auto mountinfo = read_text(root / "proc/self/mountinfo");
  const auto self_cgroup = read_text(root / "proc/self/cgroup");
  std::optional<CgroupMount> mount = mountinfo ? find_mount(*mountinfo, v2) : std::nullopt;
  std::error_code ec;
  if (!mount) {  // no mountinfo: the usual places
    const fs::path usual = v2 ? root / "sys/fs/cgroup" : root / "sys/fs/cgroup/memory";
    const char* marker = v2 ? "cgroup.controllers" : "memory.limit_in_bytes";
    if (!fs::exists(usual / marker, ec)) return std::nullopt;
    mount = CgroupMount{"/", v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory"};
  }
  Hierarchy hierarchy;
  hierarchy.mount = below_root(root, mount->mount_point);
  hierarchy.leaf = hierarchy.mount;
  const auto path = self_cgroup ? cgroup_path(*self_cgroup, v2) : std::nullopt;
  if (path) {
    // The path is relative to the hierarchy's root; the mount shows the part below mount->root.
    std::string relative = *path;
    if (mount->root != "/" && relative.rfind(mount->root, 0) == 0)
      relative = relative.substr(mount->root.size());
    const fs::path below = fs::path(relative).relative_path().lexically_normal();
    if (!below.empty() && below != "." && *below.begin() != "..") {
      const fs::path leaf = hierarchy.mount / below;
      if (fs::is_directory(leaf, ec)) hierarchy.leaf = leaf;
    }
  }
  return hierarchy;
}

/// Walks from the leaf up to the mount point, folding each level's limit and free memory in.
void fold_hierarchy(const Hierarchy& hierarchy, bool v2, MemoryInfo& info) {
  const fs::path mount = hierarchy.mount.lexically_normal();
  fs::path dir = hierarchy.leaf.lexically_normal();
  for (int depth = 0; depth < 64; ++depth) {
    std::optional<std::size_t> limit;
    if (v2) {
      const auto text = read_text(dir / "memory.max");
      if (text && trim(*text) != "max") limit = parse_size(*text);
    } else {
      const auto text = read_text(dir / "memory.limit_in_bytes");
      if (text) limit = parse_size(*text);
      if (limit && *limit >= kUnlimitedThreshold) limit.reset();
    }
    if (limit) {
      const auto usage_text = read_text(dir / (v2 ? "memory.current" : "memory.usage_in_bytes"));
      const auto usage = usage_text ? parse_size(*usage_text) : std::nullopt;
      // The inactive page cache is reclaimed before the OOM killer acts.
      const auto inactive =
          stat_field(dir / "memory.stat", v2 ? "inactive_file" : "total_inactive_file");
      std::size_t used = usage.value_or(0);
      if (inactive && *inactive <= used) used -= *inactive;
      const std::size_t free = *limit > used ? *limit - used : 0;
      if (!info.cgroup_limit || *limit < *info.cgroup_limit) {
        info.cgroup_limit = *limit;
        info.cgroup_dir = dir.string();
      }
      if (!info.cgroup_available || free < *info.cgroup_available) info.cgroup_available = free;
    }
    // Stop at the mount point: above it is not this hierarchy.
    if (dir == mount || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
}

std::optional<std::size_t> min_known(std::optional<std::size_t> a, std::optional<std::size_t> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace

std::size_t MemoryInfo::available() const noexcept {
  return min_known(mem_available, cgroup_available).value_or(0);
}

std::size_t MemoryInfo::limit() const noexcept {
  return min_known(mem_total, cgroup_limit).value_or(0);
}

MemoryInfo read_memory_info(const std::filesystem::path& root) noexcept {
  MemoryInfo info;
  try {
    if (const auto meminfo = read_text(root / "proc/meminfo")) {
      info.mem_total = meminfo_field(*meminfo, "MemTotal");
      info.mem_available = meminfo_field(*meminfo, "MemAvailable");
    }
    if (root == fs::path("/")) {
      const long pages = ::sysconf(_SC_PHYS_PAGES);
      const long available_pages = ::sysconf(_SC_AVPHYS_PAGES);
      const long page_size = ::sysconf(_SC_PAGE_SIZE);
      if (!info.mem_total && pages > 0 && page_size > 0)
        info.mem_total = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
      if (!info.mem_available && available_pages > 0 && page_size > 0)
        info.mem_available =
            static_cast<std::size_t>(available_pages) * static_cast<std::size_t>(page_size);
    }
    for (const bool v2 : {true, false})
      if (const auto hierarchy = locate(root, v2)) fold_hierarchy(*hierarchy, v2, info);
  } catch (...) {
    // Allocation failure while reading a few small files: report what is known so far.
  }
  return info;
}

std::size_t available_memory_bytes() noexcept { return read_memory_info().available(); }

std::size_t memory_limit_bytes() noexcept { return read_memory_info().limit(); }

std::size_t address_space_left_bytes() noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  unsigned long pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%lu", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  const auto size =
      static_cast<std::size_t>(pages) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto cap = static_cast<std::size_t>(limit.rlim_cur);
  return cap > size ? cap - size : 1;
}

}  // namespace dcs
