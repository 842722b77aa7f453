// MXNet's RecordIO container, as insightface ships its datasets (train.rec + train.idx).
//
// train.rec is a sequence of records. Each is stored as one or more parts:
//   uint32 magic 0xced7230a
//   uint32 lrecord: length of this part in the lower 29 bits, continuation flag in the upper 3
//                   (0 whole record, 1 first part, 2 middle part, 3 last part)
//   the part's bytes, zero-padded to a multiple of 4
// MXNet's writer splits a record wherever its payload holds the magic number at a 4-byte
// aligned position: the magic is dropped from the data and the reader puts it back between
// parts, so no magic ever appears aligned inside a part and a reader can resynchronise.
// train.idx has one line per record, "key<TAB>byte offset of its first part".
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pfc {

inline constexpr std::uint32_t kRecordIOMagic = 0xced7230au;

// Appends records to OUT.rec and their offsets to OUT.idx. Throws Error on I/O failure.
class RecordIOWriter {
 public:
  RecordIOWriter(const std::string& rec_path, const std::string& idx_path);
  ~RecordIOWriter();
  RecordIOWriter(const RecordIOWriter&) = delete;
  RecordIOWriter& operator=(const RecordIOWriter&) = delete;

  void write(std::int64_t key, std::span<const std::uint8_t> payload);
  // Flushes and closes both files, reporting any error (the destructor cannot).
  void close();
  // Records written so far that had to be split because their payload held the magic.
  std::int64_t split_records() const { return split_records_; }

 private:
  void put(const void* data, std::size_t bytes);

  std::string rec_path_;
  std::FILE* rec_ = nullptr;
  std::FILE* idx_ = nullptr;
  std::uint64_t offset_ = 0;
  std::int64_t split_records_ = 0;
};

// train.idx: key -> offset, sorted by key.
class RecordIOIndex {
 public:
  // Throws Error naming the file and line when it is missing or a line is malformed.
  static RecordIOIndex load(const std::string& idx_path);

  // The offset of `key`, or -1 when the index has no such key.
  std::int64_t find(std::int64_t key) const;
  std::size_t size() const { return entries_.size(); }
  const std::pair<std::int64_t, std::uint64_t>& entry(std::size_t i) const { return entries_[i]; }

 private:
  std::vector<std::pair<std::int64_t, std::uint64_t>> entries_;
};

// train.rec opened for reading at random offsets from many threads at once (pread).
class RecordIOFile {
 public:
  explicit RecordIOFile(const std::string& rec_path);
  ~RecordIOFile();
  RecordIOFile(const RecordIOFile&) = delete;
  RecordIOFile& operator=(const RecordIOFile&) = delete;

  // Reads the record that starts at `offset`, joining its parts. Damage (bad magic, a length
  // past the end of the file, a broken part sequence) does not throw: it returns false with
  // the reason in `why`, so that the caller can skip the record.
  bool read(std::uint64_t offset, std::vector<std::uint8_t>& payload, std::string& why) const;
  // Whether a record header (the magic) starts at `offset`.
  bool has_record_at(std::uint64_t offset) const;
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace pfc
