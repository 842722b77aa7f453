#include "data/field_file.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/error.h"

namespace pfc {

namespace {

constexpr std::size_t kMaxLine = std::size_t{1} << 20;
constexpr std::size_t kChunk = std::size_t{1} << 16;
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

FieldFile::FieldFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)),
      file_(InputFile::open_or_refuse(path_, what_)) {}

bool FieldFile::read_line() {
  line_.clear();
  while (true) {
    const std::size_t end = buffer_.find('\n', buffer_at_);
    const std::size_t stop = end == std::string::npos ? buffer_.size() : end;
    line_.append(buffer_, buffer_at_, stop - buffer_at_);
    buffer_at_ = end == std::string::npos ? buffer_.size() : end + 1;
    if (line_.size() > kMaxLine) {
      ++line_number_;
      fail("the line is longer than 1 MiB: not a list of records");
    }
    if (end != std::string::npos) return true;
    if (at_end_) return !line_.empty();
    buffer_.resize(kChunk);
    ssize_t n;
    do {
      n = ::pread(file_.fd(), buffer_.data(), kChunk, static_cast<off_t>(file_offset_));
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail(fmt::format("reading failed: {}", std::strerror(errno)));
    buffer_.resize(static_cast<std::size_t>(n));
    buffer_at_ = 0;
    file_offset_ += static_cast<std::uint64_t>(n);
    at_end_ = n == 0;
  }
}

bool FieldFile::next() {
  while (read_line()) {
    ++line_number_;
    if (line_number_ == 1 && line_.starts_with(kByteOrderMark))
      line_.erase(0, kByteOrderMark.size());
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    fields_.clear();
    std::size_t i = 0;
    while (i < line_.size()) {
      while (i < line_.size() && (line_[i] == ' ' || line_[i] == '\t')) ++i;
      const std::size_t start = i;
      while (i < line_.size() && line_[i] != ' ' && line_[i] != '\t') ++i;
      if (i > start) fields_.emplace_back(line_.data() + start, i - start);
    }
    if (!fields_.empty()) return true;
  }
  return false;
}

void FieldFile::fail(const std::string& message) const {
  throw UsageError(fmt::format("{} '{}' line {}: {}", what_, path_, line_number_, message));
}

void FieldFile::expect_fields(std::size_t count, const char* layout) const {
  if (fields_.size() != count)
    fail(fmt::format("{} fields where {} are expected ({})", fields_.size(), count, layout));
}

template <class T>
T FieldFile::parse(std::size_t index, const char* name, const char* what) const {
  const std::string_view field = fields_.at(index);
  T value{};
  const char* begin = field.data();
  if (!field.empty() && field.front() == '+') ++begin;
  const auto [end, ec] = std::from_chars(begin, field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size())
    fail(fmt::format("{} '{}' is not {}", name, field, what));
  return value;
}

std::int64_t FieldFile::integer(std::size_t index, const char* name) const {
  return parse<std::int64_t>(index, name, "a whole number");
}

double FieldFile::number(std::size_t index, const char* name) const {
  return parse<double>(index, name, "a number");
}

}  // namespace pfc
