// Whether a run may write into its output folder, decided at start-up before anything is
// written. A new run never writes where another run's results are (its metrics.h5, its
// checkpoints): the folder is refused with a message saying how to continue that run
// (`resume`) or start over elsewhere. A run that owns the folder (RunStart::owns_output: it
// continues the folder's own checkpoints, or resume = "auto" starts over where an earlier
// attempt left no checkpoint) is what the folder is for.
#pragma once

#include <filesystem>

namespace pfc {

// Throws pfc::UsageError when `owns_output` is false and `output` holds a run, or when
// `output` is a file; pfc::Error when the folder (or the nearest existing folder above it) is
// on a read-only file system or not writable.
void check_output_folder(const std::filesystem::path& output, bool owns_output);

}  // namespace pfc
