#include "data/recordio.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/error.h"

namespace pfc {

namespace {

constexpr std::uint32_t kLengthBits = 29;
constexpr std::uint32_t kLengthMask = (1u << kLengthBits) - 1;

enum PartFlag : std::uint32_t { kWhole = 0, kFirst = 1, kMiddle = 2, kLast = 3 };

std::uint32_t encode_lrecord(std::uint32_t flag, std::uint32_t length) {
  return (flag << kLengthBits) | length;
}

std::uint64_t padded(std::uint64_t length) { return (length + 3) / 4 * 4; }

std::string errno_text() { return std::strerror(errno); }

}  // namespace

RecordIOWriter::RecordIOWriter(const std::string& rec_path, const std::string& idx_path)
    : rec_path_(rec_path) {
  rec_ = std::fopen(rec_path.c_str(), "wb");
  if (!rec_) throw Error(fmt::format("cannot create {}: {}", rec_path, errno_text()));
  idx_ = std::fopen(idx_path.c_str(), "w");
  if (!idx_) {
    const std::string reason = errno_text();
    std::fclose(rec_);
    throw Error(fmt::format("cannot create {}: {}", idx_path, reason));
  }
}

RecordIOWriter::~RecordIOWriter() {
  if (rec_) std::fclose(rec_);
  if (idx_) std::fclose(idx_);
}

void RecordIOWriter::put(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, rec_) != bytes)
    throw Error(fmt::format("writing {} failed: {}", rec_path_, errno_text()));
  offset_ += bytes;
}

void RecordIOWriter::write(std::int64_t key, std::span<const std::uint8_t> payload) {
  PFC_CHECK(rec_ && idx_, "write to a closed RecordIOWriter");
  PFC_CHECK(payload.size() <= kLengthMask, "record {} has {} bytes; RecordIO allows < 2^29", key,
            payload.size());
  if (std::fprintf(idx_, "%lld\t%llu\n", static_cast<long long>(key),
                   static_cast<unsigned long long>(offset_)) < 0)
    throw Error(fmt::format("writing the index of {} failed: {}", rec_path_, errno_text()));

  // Same splitting rule as dmlc-core's RecordIOWriter::WriteRecord.
  const std::uint32_t length = static_cast<std::uint32_t>(payload.size());
  const std::uint32_t aligned_end = length / 4 * 4;
  std::uint32_t part_begin = 0;
  for (std::uint32_t i = 0; i < aligned_end; i += 4) {
    std::uint32_t word;
    std::memcpy(&word, payload.data() + i, 4);
    if (word != kRecordIOMagic) continue;
    const std::uint32_t header[2] = {kRecordIOMagic,
                                     encode_lrecord(part_begin == 0 ? kFirst : kMiddle,
                                                    i - part_begin)};
    put(header, sizeof header);
    put(payload.data() + part_begin, i - part_begin);
    part_begin = i + 4;
  }
  if (part_begin != 0) ++split_records_;
  const std::uint32_t header[2] = {
      kRecordIOMagic, encode_lrecord(part_begin != 0 ? kLast : kWhole, length - part_begin)};
  put(header, sizeof header);
  put(payload.data() + part_begin, length - part_begin);
  const std::uint32_t zero = 0;
  put(&zero, padded(length) - length);
}

void RecordIOWriter::close() {
  const bool rec_ok = std::fclose(rec_) == 0;
  const bool idx_ok = std::fclose(idx_) == 0;
  rec_ = idx_ = nullptr;
  if (!rec_ok || !idx_ok)
    throw Error(fmt::format("closing {} or its index failed: {}", rec_path_, errno_text()));
}

RecordIOIndex RecordIOIndex::load(const std::string& idx_path) {
  std::ifstream in(idx_path);
  if (!in) throw Error(fmt::format("cannot open the RecordIO index {}: {}", idx_path, errno_text()));
  RecordIOIndex index;
  std::string line;
  std::int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const auto last = line.find_last_not_of(" \t\r");
    if (last == std::string::npos) continue;
    const char* begin = line.data();
    const char* end = line.data() + last + 1;
    std::int64_t key = 0;
    std::uint64_t offset = 0;
    auto [after_key, key_error] = std::from_chars(begin, end, key);
    const char* p = after_key;
    while (p < end && (*p == '\t' || *p == ' ')) ++p;
    const bool separated = key_error == std::errc() && p > after_key;
    auto [after_offset, offset_error] =
        separated ? std::from_chars(p, end, offset) : std::from_chars_result{p, std::errc::invalid_argument};
    if (!separated || offset_error != std::errc() || after_offset != end)
      throw Error(fmt::format("{}:{}: expected \"key<TAB>offset\", found \"{}\"", idx_path,
                              line_number, line));
    // A file offset is an off_t: one from 2^63 on is no place in any file.
    if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()))
      throw Error(fmt::format("{}:{}: key {} has offset {}, beyond any file (offsets end before "
                              "2^63); the index is damaged",
                              idx_path, line_number, key, offset));
    index.entries_.emplace_back(key, offset);
  }
  std::sort(index.entries_.begin(), index.entries_.end());
  const auto duplicate = std::adjacent_find(
      index.entries_.begin(), index.entries_.end(),
      [](const auto& a, const auto& b) { return a.first == b.first; });
  if (duplicate != index.entries_.end())
    throw Error(fmt::format("{}: key {} appears more than once", idx_path, duplicate->first));
  // Every record has its own offset: keys sharing one would all read the same record (an
  // index rewritten by a broken tool trains on a single image without a word). The offsets
  // alone are sorted (half the memory of the entries: WebFace42M's index has 44M lines).
  std::vector<std::uint64_t> offsets;
  offsets.reserve(index.entries_.size());
  for (const auto& entry : index.entries_) offsets.push_back(entry.second);
  std::sort(offsets.begin(), offsets.end());
  const auto shared = std::adjacent_find(offsets.begin(), offsets.end());
  if (shared != offsets.end()) {
    const std::uint64_t offset = *shared;
    std::vector<std::int64_t> keys;
    for (const auto& [key, at] : index.entries_)
      if (at == offset) keys.push_back(key);
    throw Error(fmt::format("{}: keys {} and {}{} point at the same offset {}; an index gives "
                            "every record its own offset, so this one does not belong to its "
                            ".rec file",
                            idx_path, keys[0], keys[1],
                            keys.size() > 2 ? fmt::format(" (and {} more)", keys.size() - 2) : "",
                            offset));
  }
  return index;
}

std::int64_t RecordIOIndex::find(std::int64_t key) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [](const auto& e, std::int64_t k) { return e.first < k; });
  if (it == entries_.end() || it->first != key) return -1;
  return static_cast<std::int64_t>(it->second);
}

RecordIOFile::RecordIOFile(const std::string& rec_path) : path_(rec_path) {
  fd_ = ::open(rec_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(fmt::format("cannot open {}: {}", rec_path, errno_text()));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const std::string reason = errno_text();
    ::close(fd_);
    throw Error(fmt::format("cannot stat {}: {}", rec_path, reason));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

RecordIOFile::~RecordIOFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Whether `bytes` bytes at `offset` lie inside a file of `size` bytes (without wrapping around
// for offsets near 2^64).
bool fits(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && size - offset >= bytes;
}

// Reads exactly `bytes` at `offset` of `path` (open as `fd`); false when the file ends first.
bool read_fully(int fd, const std::string& path, std::uint64_t offset, void* out,
                std::size_t bytes) {
  auto* dst = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, dst, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(fmt::format("reading {} at offset {} failed: {}", path, offset, errno_text()));
    if (n == 0) return false;
    dst += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool RecordIOFile::has_record_at(std::uint64_t offset) const {
  std::uint32_t magic = 0;
  return fits(offset, 8, size_) && read_fully(fd_, path_, offset, &magic, 4) &&
         magic == kRecordIOMagic;
}

bool RecordIOFile::read(std::uint64_t offset, std::vector<std::uint8_t>& payload,
                        std::string& why) const {
  payload.clear();
  std::uint64_t pos = offset;
  for (int part = 0;; ++part) {
    std::uint32_t header[2];
    if (!fits(pos, sizeof header, size_)) {
      why = fmt::format("truncated: part {} header at offset {} is past the end of the file ({} "
                        "bytes)", part, pos, size_);
      return false;
    }
    if (!read_fully(fd_, path_, pos, header, sizeof header)) {
      why = fmt::format("truncated at offset {}", pos);
      return false;
    }
    if (header[0] != kRecordIOMagic) {
      why = fmt::format("no RecordIO magic at offset {} (found 0x{:08x})", pos, header[0]);
      return false;
    }
    const std::uint32_t flag = header[1] >> kLengthBits;
    const std::uint32_t length = header[1] & kLengthMask;
    const bool first_part_ok = part == 0 && (flag == kWhole || flag == kFirst);
    const bool later_part_ok = part > 0 && (flag == kMiddle || flag == kLast);
    if (!first_part_ok && !later_part_ok) {
      why = fmt::format("part {} at offset {} has continuation flag {}", part, pos, flag);
      return false;
    }
    pos += sizeof header;
    if (!fits(pos, length, size_)) {
      why = fmt::format("truncated: part {} at offset {} needs {} bytes, the file ends {} bytes "
                        "later", part, pos, length, size_ - pos);
      return false;
    }
    if (part > 0) {
      const auto* magic = reinterpret_cast<const std::uint8_t*>(&kRecordIOMagic);
      payload.insert(payload.end(), magic, magic + 4);
    }
    const std::size_t start = payload.size();
    payload.resize(start + length);
    if (!read_fully(fd_, path_, pos, payload.data() + start, length)) {
      why = fmt::format("truncated at offset {}", pos);
      return false;
    }
    pos += padded(length);
    if (flag == kWhole || flag == kLast) return true;
  }
}

}  // namespace pfc
