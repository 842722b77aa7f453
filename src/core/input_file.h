// Every file pfc reads from elsewhere (models, images, IJB lists, landmark lists) is opened
// here, because such files come from strangers: a name may be a folder, a FIFO that never
// ends or blocks the open, a device, or a file far larger than what it claims to be. Only a
// regular file is opened (a FIFO is opened non-blocking, so that checking it cannot hang), and
// no more than the caller's limit is read, each refusal naming the file, what it is and the
// limit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pfc {

// How many bytes one use of a file may read, and how messages name that bound ("an image
// file", "pfc reads images of at most 64 MiB"): the file's size is compared before any byte is
// read.
struct InputFileLimit {
  std::uint64_t bytes = UINT64_MAX;
  std::string name;  // "the 64 MiB pfc reads of an image"; empty with no limit
};

// An open regular file (closed with it).
class InputFile {
 public:
  // The file, or nullopt with `why` saying what is wrong in words that follow its name:
  // "does not exist", "is a folder, not a file", "is a FIFO (named pipe), not a file",
  // "is a character device, not a file", "holds 1073741824 bytes, more than the 64 MiB pfc
  // reads of an image", "cannot be opened: Permission denied".
  static std::optional<InputFile> open(const std::filesystem::path& path,
                                       const InputFileLimit& limit, std::string& why);
  // As open, but a UsageError "'PATH' (WHAT) WHY" (WHAT: "the model", "an image"...).
  static InputFile open_or_refuse(const std::filesystem::path& path, const std::string& what,
                                  const InputFileLimit& limit = {});

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  // Reads the whole file (its size when opened) into `bytes`; false with `why` when the read
  // fails or the file changes size under it.
  bool read_all(std::vector<std::uint8_t>& bytes, std::string& why) const;
  // `n` bytes from the start (fewer when the file is shorter).
  std::vector<std::uint8_t> head(std::size_t n) const;

 private:
  InputFile(int fd, std::uint64_t size, std::filesystem::path path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::filesystem::path path_;
};

// What a path is, in words for a message when it is not a regular file: "does not exist",
// "is a folder", "is a FIFO (named pipe)", ...; empty for a regular file. Follows links.
std::string non_file_kind(const std::filesystem::path& path);

// Reads a whole regular file within `limit`; false with `why` (as InputFile::open's, or a read
// failure).
bool read_input_file(const std::filesystem::path& path, const InputFileLimit& limit,
                     std::vector<std::uint8_t>& bytes, std::string& why);

// "64 MiB", "1.5 GiB", "300 bytes": a byte count for messages.
std::string byte_count_text(std::uint64_t bytes);

}  // namespace pfc
