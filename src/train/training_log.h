// <output>/training.log, as arcface_torch keeps one: rank 0 of `pfc train` appends to it
// everything it prints — its messages (stderr) and the progress lines (stdout) — each line
// stamped with date and time and flushed at once, so that a run that is stopped, killed or
// requeued and resumed keeps every attempt in one file.
#pragma once

#include <filesystem>
#include <string>

namespace pfc {

// From now until the process ends (errors reported on the way out included). Creates the
// output folder when missing; a second call for the same process is ignored.
void open_training_log(const std::filesystem::path& output);

// One progress line: on stdout, and in training.log once it is open.
void log_progress(const std::string& line);

}  // namespace pfc
