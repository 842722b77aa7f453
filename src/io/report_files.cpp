#include "io/report_files.h"

#include <algorithm>

#include "core/error.h"

namespace pfc {

namespace fs = std::filesystem;

std::vector<std::string> report_files(const std::vector<std::string>& paths,
                                      const WantedFile& wanted) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (!fs::exists(path))
      throw UsageError("report: '" + path + "' does not exist (give folders that runs wrote)");
    if (fs::is_regular_file(path)) {
      files.push_back(path);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(
             path, fs::directory_options::follow_directory_symlink |
                       fs::directory_options::skip_permission_denied))
      if (entry.is_regular_file() && wanted(entry.path())) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace pfc
