#include "io/report_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "core/error.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

void find_files(const fs::path& folder, const WantedFile& wanted,
                std::vector<std::string>& files, std::vector<std::string>& problems) {
  std::vector<fs::path> pending = {folder};
  while (!pending.empty()) {
    const fs::path current = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(current, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code entry_ec;
      const fs::file_status status = it->symlink_status(entry_ec);
      if (fs::is_directory(status))
        pending.push_back(it->path());
      else if (wanted(it->path()) && it->is_regular_file(entry_ec))
        files.push_back(it->path().string());
    }
    if (ec && ec != std::errc::permission_denied && ec != std::errc::no_such_file_or_directory)
      problems.push_back(fmt::format("{}: {}", current.string(), ec.message()));
  }
}

}  // namespace

std::vector<std::string> report_files(const std::vector<std::string>& paths,
                                      const WantedFile& wanted,
                                      std::vector<std::string>& problems) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status))
      throw UsageError(fmt::format("report: '{}' {} (give folders that runs wrote)", path,
                                   ec && ec != std::errc::no_such_file_or_directory
                                       ? "cannot be read: " + ec.message()
                                       : std::string("does not exist")));
    if (fs::is_regular_file(status))
      files.push_back(path);
    else
      find_files(path, wanted, files, problems);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace pfc
