#include "data/field_file.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

#include "core/error.h"

namespace pfc {

FieldFile::FieldFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)), in_(path_) {
  if (!in_)
    throw UsageError(fmt::format("{} '{}' cannot be read: {}", what_, path_,
                                 std::strerror(errno)));
}

bool FieldFile::next() {
  while (std::getline(in_, line_)) {
    ++line_number_;
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
  if (in_.bad()) fail(fmt::format("reading failed: {}", std::strerror(errno)));
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
