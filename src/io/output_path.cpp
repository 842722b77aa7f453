#include "io/output_path.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "core/error.h"
#include "io/durable_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

struct FileIdentity {
  dev_t device;
  ino_t inode;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// The file a path leads to (links followed), or nothing when there is none.
std::optional<FileIdentity> identity(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{info.st_dev, info.st_ino};
}

// The nearest folder at or above `folder` that exists ("." for an empty relative path).
fs::path nearest_existing(fs::path folder) {
  std::error_code ec;
  while (!folder.empty() && !fs::exists(folder, ec)) folder = folder.parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

void check_destination(const fs::path& path, std::string_view what, OutputFolder rule) {
  // A link is followed: the file is written where it leads.
  const fs::path target = fs::absolute(follow_links(path));
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  // A FIFO or a device is written in place (io/durable_file.h), whatever its folder allows.
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    if (::access(target.c_str(), W_OK) != 0)
      throw UsageError(fmt::format("{} '{}': cannot write it: {}", what, path.string(),
                                   std::strerror(errno)));
    return;
  }
  const fs::path folder = target.parent_path();
  const fs::path existing =
      rule == OutputFolder::must_exist ? folder : nearest_existing(folder);
  if (!fs::exists(existing, ec))
    throw UsageError(fmt::format("{} '{}': its folder '{}' does not exist", what, path.string(),
                                 folder.string()));
  if (!fs::is_directory(existing, ec))
    throw UsageError(fmt::format("{} '{}': '{}' is a file, not a folder", what, path.string(),
                                 existing.string()));
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw UsageError(fmt::format("{} '{}': cannot write in '{}': {}", what, path.string(),
                                 existing.string(), std::strerror(errno)));
}

struct InputFile {
  fs::path file;   // the file that is the output
  fs::path input;  // the input it is, or the folder it is under
};

// The input, or the file under an input folder, that is the file `output` names, if any.
std::optional<InputFile> input_that_is(const FileIdentity& output,
                                       const std::vector<fs::path>& inputs) {
  for (const fs::path& input : inputs) {
    if (identity(input) == output) return InputFile{input, input};
    std::error_code ec;
    if (!fs::is_directory(input, ec)) continue;
    fs::recursive_directory_iterator it(input, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (!it->is_directory(ec) && identity(it->path()) == output)
        return InputFile{it->path(), input};
  }
  return std::nullopt;
}

}  // namespace

void check_output_path(const fs::path& path, std::string_view what,
                       const std::vector<fs::path>& inputs, OutputFolder folder) {
  if (path.empty()) throw UsageError(fmt::format("{} '' names no file", what));
  std::error_code ec;
  if (!path.has_filename() || fs::is_directory(path, ec))
    throw UsageError(fmt::format("{} '{}' is a folder; name the file to write", what,
                                 path.string()));
  check_destination(path, what, folder);
  const std::optional<FileIdentity> output = identity(path);
  if (!output) return;
  const std::optional<InputFile> input = input_that_is(*output, inputs);
  if (!input) return;
  const std::string where =
      input->file == input->input ? "" : fmt::format(" (under '{}')", input->input.string());
  throw UsageError(fmt::format("{} '{}' is '{}'{}, which this command reads: writing it would "
                               "destroy what it reads; choose another file",
                               what, path.string(), input->file.string(), where));
}

}  // namespace pfc
