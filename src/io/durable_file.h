// Writes that survive a crash or a power cut at any moment: fsync of files and folders, and
// replacing a small file so that readers see either the old or the new text, never a mix.
// Checkpoints rely on this to keep `latest` pointing at a complete checkpoint.
#pragma once

#include <filesystem>
#include <string>

namespace pfc {

// fsync of a file, or of a folder (which makes its entries - creations, renames - durable).
void sync_path(const std::filesystem::path& path);

// Writes `text` to path + ".tmp", syncs it, renames it over `path` and syncs the folder. On
// failure the temporary is removed and `path` is as it was. Errors say why in words ("No
// space left on device").
void replace_file_atomically(const std::filesystem::path& path, const std::string& text);

// Where a chain of symbolic links that starts at `path` ends (`path` itself when it is no
// link), whether or not a file is there yet: where writing to `path` lands.
std::filesystem::path follow_links(std::filesystem::path path);

// Gives `path` the contents `text` for another program to read, whatever `path` is: a regular
// file, or none yet, is replaced atomically (replace_file_atomically) where a symbolic link
// leads, the link kept; an existing FIFO, device or socket is written in place, as a shell's
// `>` would, never replaced by a file. A FIFO that no process opens for reading within
// `fifo_wait_s` seconds is an Error (instead of a hang).
void write_whole_file(const std::filesystem::path& path, const std::string& text,
                      double fifo_wait_s = 10);

// Creates or truncates `path`, writes `text` and syncs it; every write, the sync and the close
// are checked.
void write_file_durably(const std::filesystem::path& path, const std::string& text);

// Renames a file or folder and syncs the folder holding the new name.
void rename_durably(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace pfc
