// The files `pfc report` reads: those its arguments name, and those below its folders that a
// test accepts (metrics.h5 of runs and plans, results of pfc ijb).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace pfc {

// Every regular file of `paths`, and every file in a folder of `paths` or the folders below it
// that `wanted` accepts; sorted, each once. Links to folders are not followed (a `self -> .`
// link would loop, one to `/` would search the machine); folders that cannot be listed are
// skipped: for permission or because they vanished (/proc) silently, for anything else with a
// line in `problems`. A path that does not exist is a UsageError.
using WantedFile = std::function<bool(const std::filesystem::path&)>;
std::vector<std::string> report_files(const std::vector<std::string>& paths,
                                      const WantedFile& wanted,
                                      std::vector<std::string>& problems);

}  // namespace pfc
