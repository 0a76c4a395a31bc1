// Output planning: names, collisions between outputs and inputs, free space.
#include "outputs.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/log.hpp"
#include "dcs/sysinfo.hpp"
#include "output_formats.hpp"

namespace dcs {

std::string default_output_path(const std::string& input, const std::string& dir,
                                const std::string& extension) {
  std::filesystem::path name = std::filesystem::path(input).filename();
  if (name.extension() == ".gz") name.replace_extension();
  name.replace_extension();
  std::filesystem::path out = dir.empty() ? name : std::filesystem::path(dir) / name;
  return out.string() + extension;
}

}  // namespace dcs

namespace dcs::pipeline {
namespace {

/// `path` with ".model<N>" before its extension (a ".gz" after it counts as part of it):
/// out.h5 -> out.model3.h5, x.dx.gz -> x.model3.dx.gz.
std::string with_model_suffix(const std::string& path, long long model) {
  const std::filesystem::path whole(path);
  std::string name = whole.filename().string();
  std::size_t dot = name.size();
  if (name.ends_with(".gz") && name.size() > 3) dot = name.size() - 3;
  const std::size_t before = name.rfind('.', dot - 1);
  if (before != std::string::npos && before > 0) dot = before;
  name.insert(dot, fmt::format(".model{}", model));
  return (whole.parent_path() / name).string();
}

/// The default-named output of `input` with `extension`, in --output-dir, named by
/// --name-template.
std::string named_output(const OutputRequest& output, const std::string& input,
                         const char* extension) {
  if (output.name_template.empty()) return default_output_path(input, output.dir, extension);
  const std::string stem = default_output_path(input, "", "");
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(input, error).lexically_normal();
  const std::string parent = absolute.parent_path().filename().string();
  std::string name;
  const std::string& text = output.name_template;  // fields checked by check_name_template
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text.compare(at, 6, "{stem}") == 0) name += stem, at += 5;
    else if (text.compare(at, 8, "{parent}") == 0) name += parent, at += 7;
    else name += text[at];
  }
  const std::filesystem::path dir(output.dir);
  return ((output.dir.empty() ? std::filesystem::path(name) : dir / name).string()) + extension;
}

/// A second output named after the HDF5 one: beside it with `extension`.
std::string beside_output(const OutputRequest& output, const char* extension) {
  return default_output_path(
      output.hdf5_path, std::filesystem::path(output.hdf5_path).parent_path().string(), extension);
}

}  // namespace

OutputPaths output_paths(const RunConfig& config, const std::string& input, long long model) {
  const bool single = config.input.files.size() == 1 || config.trajectory.has_value();
  const bool named = single && !config.output.hdf5_path.empty();
  OutputPaths paths;
  // Each format: the path given, else beside the HDF5 output named after it, else <stem> in
  // --output-dir.
  for (const OutputFormat& format : output_formats()) {
    if (!format.wanted(config.output)) continue;
    const std::string& given = format.given(config.output);
    const char* extension = format.extension(config.output);
    std::string& path = paths.*format.path;
    path = single && !given.empty() ? given
           : named                  ? beside_output(config.output, extension)
                                    : named_output(config.output, input, extension);
    if (model >= 0) path = with_model_suffix(path, model);
  }
  if (config.output.profile != ProfileAxis::kNone) {
    paths.profile = named ? beside_output(config.output, ".profile.csv")
                          : named_output(config.output, input, ".profile.csv");
    if (model >= 0) paths.profile = with_model_suffix(paths.profile, model);
  }
  paths.store = io::partial_path_for(paths.first());
  return paths;
}

void prepare_output_dir(const OutputRequest& output) {
  if (output.dir.empty()) return;
  std::error_code error;
  if (!std::filesystem::exists(output.dir, error)) {
    std::filesystem::create_directories(output.dir, error);
    if (error)
      throw IoError(fmt::format("cannot create --output-dir {}: {}", output.dir, error.message()));
    log().info("created the output directory {}", output.dir);
  } else if (!std::filesystem::is_directory(output.dir, error)) {
    throw IoError("--output-dir " + output.dir + " is not a directory");
  }
}

namespace {

struct Named {
  std::string what;  ///< "the HDF5 output", "the input", ...
  std::string path;  ///< as given
};

/// Files by identity: resolved path, and device and inode where they exist.
class FileRegistry {
 public:
  /// Registers `file`; returns the file registered before it under the same identity, if any.
  std::optional<Named> claim(const Named& file) {
    std::optional<Named> clash;
    const auto [at, fresh] = by_path_.emplace(resolved(file.path), file);
    if (!fresh) clash = at->second;
    struct stat info {};
    if (::stat(file.path.c_str(), &info) == 0) {
      const auto [same, new_inode] =
          by_inode_.emplace(std::make_pair(info.st_dev, info.st_ino), file);
      if (!new_inode && !clash) clash = same->second;
    }
    return clash;
  }

 private:
  static std::string resolved(const std::string& path) {
    std::error_code ec;
    std::filesystem::path full =
        std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? std::filesystem::absolute(path).lexically_normal().string() : full.string();
  }
  std::map<std::string, Named> by_path_;
  std::map<std::pair<dev_t, ino_t>, Named> by_inode_;
};

/// Two inputs with one stem write the same files, whatever the extensions.
void check_distinct_stems(const OutputRequest& output, const std::vector<std::string>& all_inputs) {
  std::map<std::string, std::string> claimed;  // <dir>/<stem> -> input
  for (const std::string& input : all_inputs) {
    const std::string path =
        std::filesystem::weakly_canonical(named_output(output, input, "")).string();
    const auto [where, inserted] = claimed.emplace(path, input);
    if (!inserted)
      throw UsageError("inputs " + where->second + " and " + input + " would write the same " +
                       "output " + path +
                       ".*; rename one, run them separately or name the "
                       "outputs after their folders too (--name-template {parent}_{stem})");
  }
}

}  // namespace

namespace {

/// Registers output `what` at `path`; refuses one that is an input or an output registered
/// before (`context` ends the latter message: " (input x.pqr)" in a batch).
void claim_output(FileRegistry& files, const std::string& what, const std::string& path,
                  const std::string& context = "") {
  if (path.empty()) return;
  const std::optional<Named> clash = files.claim({what, path});
  if (!clash) return;
  if (clash->what == "the input")
    throw UsageError(
        fmt::format("{} {} is the input file {}: dcs never overwrites an input, "
                    "not even with --force; write the map elsewhere",
                    what, path, clash->path));
  throw UsageError(fmt::format("{} {} and {} {} are the same file{}; give each output its own name",
                               what, path, clash->what, clash->path, context));
}

}  // namespace

void check_distinct_files(const std::vector<std::string>& inputs,
                          const std::vector<std::pair<std::string, std::string>>& outputs) {
  FileRegistry files;
  for (const std::string& input : inputs) (void)files.claim({"the input", input});
  for (const auto& [what, path] : outputs) claim_output(files, what, path);
}

void check_distinct_paths(const RunConfig& config, const std::vector<std::string>& all_inputs) {
  check_distinct_stems(config.output, all_inputs);
  if (config.output.null_output) return;  // nothing is written
  // --models each adds ".model<N>" to every name of an input alike: checking the inputs'
  // names suffices.
  FileRegistry files;
  for (const std::string& input : all_inputs) (void)files.claim({"the input", input});
  for (const std::string& input : config.input.files) {
    const OutputPaths paths = output_paths(config, input);
    const std::string context =
        config.input.files.size() > 1 ? fmt::format(" (input {})", input) : std::string();
    for (const OutputFormat& format : output_formats())
      claim_output(files, format.what, paths.*format.path, context);
    claim_output(files, "the profile CSV", paths.profile, context);
    claim_output(files, "the partial file", paths.store, context);
  }
}

namespace {

std::string directory_of(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

}  // namespace

void check_free_space(const std::vector<DiskNeed>& needs) {
  rlimit limit{};
  const bool limited = ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
  // The needs of each file system (by the device of each file's directory), in order.
  std::map<dev_t, std::vector<const DiskNeed*>> by_device;
  std::vector<dev_t> devices;
  for (const DiskNeed& need : needs) {
    if (limited && need.bytes > limit.rlim_cur)
      throw IoError(
          fmt::format("{} needs {} but the file size limit (ulimit -f) is {}; raise the "
                      "limit or make the map smaller",
                      need.what, format_bytes(need.bytes),
                      format_bytes(static_cast<std::size_t>(limit.rlim_cur))));
    struct stat info {};
    if (::stat(directory_of(need.path).c_str(), &info) != 0) continue;  // the write will tell
    auto& list = by_device[info.st_dev];
    if (list.empty()) devices.push_back(info.st_dev);
    list.push_back(&need);
  }
  for (const dev_t device : devices) {
    const std::vector<const DiskNeed*>& list = by_device[device];
    const std::string dir = directory_of(list.front()->path);
    struct statvfs info {};
    if (::statvfs(dir.c_str(), &info) != 0) continue;
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
    std::uint64_t sum = 0;
    std::string whats;
    for (std::size_t i = 0; i < list.size(); ++i) {
      sum += list[i]->bytes;
      whats += (i == 0 ? "" : i + 1 == list.size() ? " and " : ", ") + list[i]->what;
    }
    if (sum <= free_bytes) continue;
    throw IoError(
        fmt::format("{} need{} {}{} but {} has only {} free; free some space or write elsewhere "
                    "(--output-dir)",
                    whats, list.size() == 1 ? "s" : "", format_bytes(sum),
                    list.size() == 1 ? "" : " together", dir, format_bytes(free_bytes)));
  }
}

void check_free_space(const std::string& path, std::size_t bytes, const std::string& what) {
  check_free_space({DiskNeed{path, bytes, what}});
}

}  // namespace dcs::pipeline
