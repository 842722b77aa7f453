// The files `pfc report` reads: those its arguments name, and those below its folders that a
// test accepts (metrics.h5 of runs and plans, results of pfc ijb).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace pfc {

// Every regular file of `paths`, and every one under a folder of `paths` (recursively,
// following links, skipping what may not be read) that `wanted` accepts; sorted, each once.
// A path that does not exist is a UsageError.
using WantedFile = std::function<bool(const std::filesystem::path&)>;
std::vector<std::string> report_files(const std::vector<std::string>& paths,
                                      const WantedFile& wanted);

}  // namespace pfc
