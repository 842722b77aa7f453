#include "io/zip_archive.h"

#include <fmt/format.h>
#include <zip.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

ZipArchive::ZipArchive(const std::filesystem::path& path, const InputFileLimit& limit)
    : path_(path) {
  const InputFile file = InputFile::open_or_refuse(path, "a zip archive", limit);
  file_size_ = file.size();
  // libzip closes the descriptor it is given; InputFile closes its own.
  const int fd = ::dup(file.fd());
  if (fd < 0)
    throw Error(fmt::format("'{}': cannot duplicate its descriptor: {}", path.string(),
                            std::strerror(errno)));
  int code = 0;
  // ZIP_CHECKCONS: the central directory must agree with the local headers, so a truncated or
  // spliced archive is refused at open rather than read in part.
  archive_ = zip_fdopen(fd, ZIP_CHECKCONS, &code);
  if (archive_ == nullptr) {
    ::close(fd);
    throw UsageError(fmt::format("'{}' is not a readable zip archive: {}", path.string(),
                                 zip_error_text(code)));
  }
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
  const zip_uint64_t wanted = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index(name)), 0, &stat) != 0 ||
      (stat.valid & wanted) != wanted)
    throw UsageError(fmt::format("'{}': cannot read the size of entry '{}': {}", path_.string(),
                                 name, zip_strerror(archive_)));
  const auto damaged = [&](const std::string& why) {
    return UsageError(fmt::format("'{}': entry '{}' claims {} bytes, {}: the archive is damaged "
                                  "or made to mislead",
                                  path_.string(), name, stat.size, why));
  };
  if (stat.comp_size > file_size_)
    throw damaged(fmt::format("stored in {} bytes of a file of {}", stat.comp_size, file_size_));
  // Deflate turns a byte of input into at most 1032 bytes of output (RFC 1951: a 258-byte
  // match in 2 bits, at best); a stored entry is its bytes.
  if (stat.comp_method == ZIP_CM_STORE && stat.size != stat.comp_size)
    throw damaged(fmt::format("stored uncompressed in {} bytes", stat.comp_size));
  if (stat.comp_method == ZIP_CM_DEFLATE && stat.size / 1032 > stat.comp_size)
    throw damaged(fmt::format("more than deflate makes of its {} compressed bytes",
                              stat.comp_size));
  if (stat.comp_method != ZIP_CM_STORE && stat.comp_method != ZIP_CM_DEFLATE)
    throw UsageError(fmt::format("'{}': entry '{}' is compressed with zip method {}; pfc reads "
                                 "stored and deflated entries (torch.save stores them)",
                                 path_.string(), name, stat.comp_method));
  return stat.size;
}

std::vector<std::uint8_t> ZipArchive::read(const std::string& name) const {
  return read_part(name, 0, size(name));
}

std::vector<std::uint8_t> ZipArchive::read_part(const std::string& name, std::uint64_t begin,
                                                std::uint64_t end) const {
  const std::uint64_t entry_size = size(name);
  PFC_CHECK(begin <= end && end <= entry_size, "bytes [{}, {}) of an entry of {}", begin, end,
            entry_size);
  const auto close = [](zip_file_t* f) { zip_fclose(f); };
  std::unique_ptr<zip_file_t, decltype(close)> file(
      zip_fopen_index(archive_, static_cast<zip_uint64_t>(index(name)), 0), close);
  if (!file)
    throw UsageError(fmt::format("'{}': cannot open entry '{}': {}", path_.string(), name,
                                 zip_strerror(archive_)));
  const auto read_into = [&](std::uint8_t* to, std::uint64_t n) {
    std::uint64_t done = 0;
    while (done < n) {
      const zip_int64_t got = zip_fread(file.get(), to + done, n - done);
      if (got < 0)
        throw UsageError(fmt::format("'{}': entry '{}' cannot be read: {}", path_.string(), name,
                                     zip_file_strerror(file.get())));
      if (got == 0) break;
      done += static_cast<std::uint64_t>(got);
    }
    return done;
  };
  const auto short_entry = [&] {
    return UsageError(fmt::format("'{}': entry '{}' does not hold the {} bytes its directory "
                                  "says",
                                  path_.string(), name, entry_size));
  };
  std::vector<std::uint8_t> skipped(std::min<std::uint64_t>(begin, std::uint64_t{1} << 16));
  for (std::uint64_t at = 0; at < begin;) {
    const std::uint64_t n = std::min<std::uint64_t>(skipped.size(), begin - at);
    if (read_into(skipped.data(), n) != n) throw short_entry();
    at += n;
  }
  std::vector<std::uint8_t> bytes(end - begin);
  if (read_into(bytes.data(), bytes.size()) != bytes.size()) throw short_entry();
  if (end == entry_size) {
    // Reading past the recorded size finds the end, and only there does libzip compare the
    // CRC.
    std::uint8_t extra = 0;
    if (read_into(&extra, 1) != 0) throw short_entry();
  }
  return bytes;
}

bool looks_like_zip(std::span<const std::uint8_t> head) {
  return head.size() >= 4 && head[0] == 'P' && head[1] == 'K' &&
         ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

}  // namespace pfc
