// Where a command is about to write a file, checked before its long work starts: a path that
// cannot take the file (empty, a folder, in a folder that does not exist or cannot be written)
// is a message and exit 2 at once, not after hours of work; and an output that is one of the
// command's own inputs (the .bin it embeds, the checkpoint's model.h5, the run's metrics.h5) is
// refused, since writing it would destroy what the command reads. Inputs are compared by
// device and inode, so no spelling (`./`, `..`, a symbolic or a hard link) hides one.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace pfc {

enum class OutputFolder {
  must_exist,         // the file's folder is there already
  created_if_missing  // the command creates it: the nearest folder above that exists is checked
};

// Throws pfc::UsageError when `path` names no file ("", "DIR/"), is a folder (or a link to
// one), lies under a file, or in a folder that does not exist (OutputFolder::must_exist) or
// cannot be written in; and, when `path` exists, when it is one of `inputs` or a file under
// one of them (folders are searched recursively, without following links to folders). `what`
// names the argument in the messages ("--output", "MODEL.onnx").
void check_output_path(const std::filesystem::path& path, std::string_view what,
                       const std::vector<std::filesystem::path>& inputs = {},
                       OutputFolder folder = OutputFolder::must_exist);

}  // namespace pfc
