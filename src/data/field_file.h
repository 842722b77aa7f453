// Text files that hold one record a line in fields separated by spaces or tabs (insightface's
// IJB meta files, landmark lists for `pfc pack --landmarks`): read a line at a time, numbers
// parsed whole (a field "12x" is not 12), and every problem a UsageError that names the file
// and the line. Blank lines are skipped, a trailing carriage return ignored, and a UTF-8
// byte-order mark at the start of the file (which editors on Windows write, and which would
// otherwise be part of the first field) is skipped. The file is opened as core/input_file.h
// opens untrusted files (a folder or a FIFO is refused as what it is), and a line longer than
// 1 MiB is refused: these are lists of short records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_file.h"

namespace pfc {

class FieldFile {
 public:
  // `what` names the file's role in messages ("the pair list"). Throws UsageError when the
  // file cannot be opened or is not a regular file.
  FieldFile(std::string path, std::string what);

  // The next record's fields; false at the end of the file.
  bool next();
  const std::vector<std::string_view>& fields() const { return fields_; }
  // The record's line as read (without its line end), and its number from 1.
  std::string_view text() const { return line_; }
  std::int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

  // "'PATH' line N: " before `message`, as a UsageError.
  [[noreturn]] void fail(const std::string& message) const;
  // Fails unless the record has `count` fields, naming `layout` ("image_name template_id
  // media_id").
  void expect_fields(std::size_t count, const char* layout) const;
  // Field `index` as a whole integer / a decimal number (NaN and infinities parse; the caller
  // decides whether they are allowed), or a failure naming `name`.
  std::int64_t integer(std::size_t index, const char* name) const;
  double number(std::size_t index, const char* name) const;

 private:
  // Field `index` parsed whole by std::from_chars (a leading '+' allowed, as Python's int and
  // float take it).
  template <class T>
  T parse(std::size_t index, const char* name, const char* what) const;
  // The next line into line_ (without its '\n'); false at the end of the file.
  bool read_line();

  std::string path_;
  std::string what_;
  InputFile file_;
  std::string buffer_;  // read ahead of line_
  std::size_t buffer_at_ = 0;
  std::uint64_t file_offset_ = 0;
  bool at_end_ = false;
  std::string line_;
  std::vector<std::string_view> fields_;
  std::int64_t line_number_ = 0;
};

}  // namespace pfc
