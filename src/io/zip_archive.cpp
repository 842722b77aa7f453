#include "io/zip_archive.h"

#include <fmt/format.h>
#include <zip.h>

#include <fstream>
#include <memory>

#include "core/error.h"

namespace pfc {

namespace {

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

}  // namespace

ZipArchive::ZipArchive(const std::filesystem::path& path) : path_(path) {
  int code = 0;
  // ZIP_CHECKCONS: the central directory must agree with the local headers, so a truncated or
  // spliced archive is refused at open rather than read in part.
  archive_ = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (archive_ == nullptr)
    throw UsageError(fmt::format("'{}' is not a readable zip archive: {}", path.string(),
                                 zip_error_text(code)));
  const zip_int64_t count = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive_, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (name == nullptr)
      throw UsageError(fmt::format("'{}': entry {} of the zip archive has no readable name: {}",
                                   path.string(), i, zip_strerror(archive_)));
    names_.emplace_back(name);
  }
}

ZipArchive::~ZipArchive() {
  if (archive_ != nullptr) zip_discard(archive_);
}

std::int64_t ZipArchive::index(const std::string& name) const {
  const zip_int64_t i = zip_name_locate(archive_, name.c_str(), ZIP_FL_ENC_RAW);
  if (i < 0)
    throw UsageError(fmt::format("'{}' has no entry '{}'", path_.string(), name));
  return i;
}

bool ZipArchive::contains(const std::string& name) const {
  return zip_name_locate(archive_, name.c_str(), ZIP_FL_ENC_RAW) >= 0;
}

std::uint64_t ZipArchive::size(const std::string& name) const {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index(name)), 0, &stat) != 0 ||
      !(stat.valid & ZIP_STAT_SIZE))
    throw UsageError(fmt::format("'{}': cannot read the size of entry '{}': {}", path_.string(),
                                 name, zip_strerror(archive_)));
  return stat.size;
}

std::vector<std::uint8_t> ZipArchive::read(const std::string& name) const {
  const std::uint64_t expected = size(name);
  const auto close = [](zip_file_t* f) { zip_fclose(f); };
  std::unique_ptr<zip_file_t, decltype(close)> file(
      zip_fopen_index(archive_, static_cast<zip_uint64_t>(index(name)), 0), close);
  if (!file)
    throw UsageError(fmt::format("'{}': cannot open entry '{}': {}", path_.string(), name,
                                 zip_strerror(archive_)));
  std::vector<std::uint8_t> bytes(expected);
  std::uint64_t done = 0;
  while (done < expected) {
    const zip_int64_t n = zip_fread(file.get(), bytes.data() + done, expected - done);
    if (n < 0)
      throw UsageError(fmt::format("'{}': entry '{}' cannot be read: {}", path_.string(), name,
                                   zip_file_strerror(file.get())));
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  // Reading past the recorded size finds the end, and only there does libzip compare the CRC.
  std::uint8_t extra = 0;
  const zip_int64_t past = zip_fread(file.get(), &extra, 1);
  if (past < 0)
    throw UsageError(fmt::format("'{}': entry '{}' cannot be read: {}", path_.string(), name,
                                 zip_file_strerror(file.get())));
  if (done != expected || past != 0)
    throw UsageError(fmt::format("'{}': entry '{}' does not hold the {} bytes its directory "
                                 "says",
                                 path_.string(), name, expected));
  return bytes;
}

bool looks_like_zip(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[4] = {};
  if (!in.read(head, 4)) return false;
  return head[0] == 'P' && head[1] == 'K' &&
         ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

}  // namespace pfc
