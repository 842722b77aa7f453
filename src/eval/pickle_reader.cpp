#include "eval/pickle_reader.h"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/error.h"

namespace pfc {

namespace {

// Every opcode of pickle protocols 0 to 5 (Python's Lib/pickle.py), so that a refused one is
// named; `runs_code` marks those that import or call something.
struct OpcodeName {
  std::uint8_t code;
  std::string_view name;
  bool runs_code = false;
};

constexpr OpcodeName kOpcodes[] = {
    {'(', "MARK"},           {'.', "STOP"},          {'0', "POP"},
    {'1', "POP_MARK"},       {'2', "DUP"},           {'F', "FLOAT"},
    {'I', "INT"},            {'J', "BININT"},        {'K', "BININT1"},
    {'L', "LONG"},           {'M', "BININT2"},       {'N', "NONE"},
    {'P', "PERSID", true},   {'Q', "BINPERSID", true}, {'R', "REDUCE", true},
    {'S', "STRING"},         {'T', "BINSTRING"},     {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"},        {'X', "BINUNICODE"},    {'a', "APPEND"},
    {'b', "BUILD", true},    {'c', "GLOBAL", true},  {'d', "DICT"},
    {'}', "EMPTY_DICT"},     {'e', "APPENDS"},       {'g', "GET"},
    {'h', "BINGET"},         {'i', "INST", true},    {'j', "LONG_BINGET"},
    {'l', "LIST"},           {']', "EMPTY_LIST"},    {'o', "OBJ", true},
    {'p', "PUT"},            {'q', "BINPUT"},        {'r', "LONG_BINPUT"},
    {'s', "SETITEM"},        {'t', "TUPLE"},         {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"},       {'G', "BINFLOAT"},      {0x80, "PROTO"},
    {0x81, "NEWOBJ", true},  {0x82, "EXT1", true},   {0x83, "EXT2", true},
    {0x84, "EXT4", true},    {0x85, "TUPLE1"},       {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},        {0x88, "NEWTRUE"},      {0x89, "NEWFALSE"},
    {0x8a, "LONG1"},         {0x8b, "LONG4"},        {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},     {0x8f, "EMPTY_SET"},    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},     {0x92, "NEWOBJ_EX", true}, {0x93, "STACK_GLOBAL", true},
    {0x94, "MEMOIZE"},       {0x95, "FRAME"},        {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},   {0x98, "READONLY_BUFFER"},
};

const OpcodeName* find_opcode(std::uint8_t code) {
  for (const OpcodeName& op : kOpcodes)
    if (op.code == code) return &op;
  return nullptr;
}

std::string opcode_label(std::uint8_t code) {
  const OpcodeName* op = find_opcode(code);
  const bool printable = code >= 0x20 && code < 0x7f;
  const std::string byte = printable ? fmt::format("'{}'", static_cast<char>(code))
                                     : fmt::format("0x{:02x}", code);
  return op ? fmt::format("{} ({})", op->name, byte) : fmt::format("byte {}", byte);
}

constexpr std::size_t kNoFrame = std::numeric_limits<std::size_t>::max();

class Parser {
 public:
  explicit Parser(std::span<const std::uint8_t> data) : data_(data) {}

  PickleDocument parse() {
    if (data_.empty()) fail(0, "the file is empty, not a pickle");
    if (data_[0] != 0x80)
      fail(0, fmt::format("not a pickle of protocol 2 or later: it starts with {}, not PROTO "
                          "(0x80)",
                          opcode_label(data_[0])));
    while (true) {
      const std::size_t at = pos_;
      if (at >= data_.size())
        fail(at, "the pickle ends without STOP: the file is truncated");
      const std::uint8_t code = take(1, at, "an opcode")[0];
      if (at > 0 && code == 0x80) fail(at, "PROTO appears again after the start");
      if (apply(code, at)) break;
    }
    if (pos_ != data_.size())
      fail(pos_, fmt::format("{} bytes follow STOP; a verification file holds one pickle",
                             data_.size() - pos_));
    return std::move(doc_);
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& why) const {
    throw UsageError(fmt::format("pickle byte {}: {}", at, why));
  }

  // n bytes at the read position, inside the current frame if one is open.
  const std::uint8_t* take(std::size_t n, std::size_t opcode_at, const char* what) {
    if (frame_end_ != kNoFrame && pos_ == frame_end_) frame_end_ = kNoFrame;
    if (n > data_.size() - pos_)
      fail(opcode_at, fmt::format("{} needs {} bytes but the file ends after {}: truncated",
                                  what, n, data_.size() - pos_));
    if (frame_end_ != kNoFrame && n > frame_end_ - pos_)
      fail(opcode_at, fmt::format("{} runs past the end of its frame at byte {}", what,
                                  frame_end_));
    const std::uint8_t* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::uint64_t little_endian(std::size_t bytes, std::size_t at, const char* what) {
    const std::uint8_t* p = take(bytes, at, what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
  }

  // Where the items above the last MARK begin (the "fence" nothing may pop below).
  std::size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }

  void need(std::size_t count, std::size_t at, std::uint8_t code) const {
    if (stack_.size() - fence() < count)
      fail(at, fmt::format("{} needs {} object{} on the stack{}", opcode_label(code), count,
                           count == 1 ? "" : "s", marks_.empty() ? "" : " above the MARK"));
  }

  std::size_t add(PickleObject object) {
    doc_.objects.push_back(std::move(object));
    return doc_.objects.size() - 1;
  }

  void push_bytes(std::size_t size, std::size_t at, const char* what) {
    PickleObject o;
    o.kind = PickleObject::Kind::bytes;
    take(size, at, what);
    o.offset = pos_ - size;
    o.size = size;
    stack_.push_back(add(std::move(o)));
  }

  void push_sequence(PickleObject::Kind kind, std::vector<std::size_t> items) {
    PickleObject o;
    o.kind = kind;
    o.items = std::move(items);
    stack_.push_back(add(std::move(o)));
  }

  // The items above the last MARK, which is removed.
  std::vector<std::size_t> pop_to_mark(std::size_t at, std::uint8_t code) {
    if (marks_.empty()) fail(at, fmt::format("{} without a MARK before it", opcode_label(code)));
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<std::size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                   stack_.end());
    stack_.resize(mark);
    return items;
  }

  std::vector<std::size_t> pop_items(std::size_t count, std::size_t at, std::uint8_t code) {
    need(count, at, code);
    std::vector<std::size_t> items(stack_.end() - static_cast<std::ptrdiff_t>(count),
                                   stack_.end());
    stack_.resize(stack_.size() - count);
    return items;
  }

  PickleObject& list_below(std::size_t count, std::size_t at, std::uint8_t code) {
    need(count + 1, at, code);
    PickleObject& list = doc_.objects[stack_[stack_.size() - count - 1]];
    if (list.kind != PickleObject::Kind::list)
      fail(at, fmt::format("{} appends to {}, not a list", opcode_label(code),
                           describe_pickle_object(list)));
    return list;
  }

  void memo_put(std::uint64_t key, std::size_t at, std::uint8_t code) {
    need(1, at, code);
    memo_[key] = stack_.back();
  }

  void memo_get(std::uint64_t key, std::size_t at) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail(at, fmt::format("memo key {} is used before it is set", key));
    stack_.push_back(it->second);
  }

  // Applies one opcode; true at STOP.
  bool apply(std::uint8_t code, std::size_t at) {
    using Kind = PickleObject::Kind;
    switch (code) {
      case 0x80: {  // PROTO
        const std::uint64_t version = little_endian(1, at, "PROTO's version");
        if (version < 2 || version > 5)
          fail(at, fmt::format("pickle protocol {}; pfc reads protocols 2 to 5", version));
        return false;
      }
      case 0x95: {  // FRAME
        if (frame_end_ != kNoFrame && pos_ != frame_end_)
          fail(at, fmt::format("a new frame begins before the frame ending at byte {}",
                               frame_end_));
        frame_end_ = kNoFrame;
        const std::uint64_t length = little_endian(8, at, "FRAME's length");
        if (length > data_.size() - pos_)
          fail(at, fmt::format("a frame of {} bytes runs past the end of the file ({} bytes "
                               "left): truncated",
                               length, data_.size() - pos_));
        frame_end_ = pos_ + static_cast<std::size_t>(length);
        return false;
      }
      case '.':  // STOP
        if (!marks_.empty()) fail(at, "STOP with a MARK still open");
        if (stack_.size() != 1)
          fail(at, fmt::format("STOP with {} objects on the stack, not 1", stack_.size()));
        doc_.root = stack_.back();
        return true;
      case '(':  // MARK
        marks_.push_back(stack_.size());
        return false;
      case ']':  // EMPTY_LIST
        push_sequence(Kind::list, {});
        return false;
      case ')':  // EMPTY_TUPLE
        push_sequence(Kind::tuple, {});
        return false;
      case 'a':  // APPEND
        list_below(1, at, code).items.push_back(stack_.back());
        stack_.pop_back();
        return false;
      case 'e': {  // APPENDS
        std::vector<std::size_t> items = pop_to_mark(at, code);
        PickleObject& list = list_below(0, at, code);
        list.items.insert(list.items.end(), items.begin(), items.end());
        return false;
      }
      case 't':  // TUPLE
        push_sequence(Kind::tuple, pop_to_mark(at, code));
        return false;
      case 0x85:  // TUPLE1
      case 0x86:  // TUPLE2
      case 0x87:  // TUPLE3
        push_sequence(Kind::tuple, pop_items(static_cast<std::size_t>(code - 0x84), at, code));
        return false;
      case 0x88:  // NEWTRUE
      case 0x89: {  // NEWFALSE
        PickleObject o;
        o.kind = Kind::boolean;
        o.value = code == 0x88;
        stack_.push_back(add(std::move(o)));
        return false;
      }
      case 'U':  // SHORT_BINSTRING
      case 'C':  // SHORT_BINBYTES
        push_bytes(little_endian(1, at, "a short string's length"), at, "a short string");
        return false;
      case 'T': {  // BINSTRING: a signed length
        const auto length = static_cast<std::int32_t>(little_endian(4, at, "BINSTRING's length"));
        if (length < 0) fail(at, fmt::format("BINSTRING with a negative length {}", length));
        push_bytes(static_cast<std::size_t>(length), at, "a string");
        return false;
      }
      case 'B':  // BINBYTES
        push_bytes(little_endian(4, at, "BINBYTES' length"), at, "a byte string");
        return false;
      case 0x8e: {  // BINBYTES8
        const std::uint64_t length = little_endian(8, at, "BINBYTES8's length");
        if (length > data_.size() - pos_)
          fail(at, fmt::format("BINBYTES8 of {} bytes but the file ends after {}: truncated",
                               length, data_.size() - pos_));
        push_bytes(static_cast<std::size_t>(length), at, "a byte string");
        return false;
      }
      case 'q':  // BINPUT
        memo_put(little_endian(1, at, "BINPUT's key"), at, code);
        return false;
      case 'r':  // LONG_BINPUT
        memo_put(little_endian(4, at, "LONG_BINPUT's key"), at, code);
        return false;
      case 0x94:  // MEMOIZE
        memo_put(memo_.size(), at, code);
        return false;
      case 'h':  // BINGET
        memo_get(little_endian(1, at, "BINGET's key"), at);
        return false;
      case 'j':  // LONG_BINGET
        memo_get(little_endian(4, at, "LONG_BINGET's key"), at);
        return false;
      default:
        break;
    }
    const OpcodeName* op = find_opcode(code);
    if (op == nullptr) fail(at, fmt::format("{} is not a pickle opcode", opcode_label(code)));
    if (op->runs_code)
      fail(at, fmt::format("opcode {} is refused: it makes the reader import or call code, "
                           "which pfc never does; a verification file holds only byte "
                           "strings, booleans, lists and tuples",
                           opcode_label(code)));
    fail(at, fmt::format("opcode {} is refused: a verification file holds only byte strings, "
                         "booleans, lists and tuples",
                         opcode_label(code)));
  }

  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
  std::size_t frame_end_ = kNoFrame;
  PickleDocument doc_;
  std::vector<std::size_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::size_t> memo_;
};

}  // namespace

PickleDocument parse_pickle(std::span<const std::uint8_t> data) { return Parser(data).parse(); }

std::string describe_pickle_object(const PickleObject& object) {
  switch (object.kind) {
    case PickleObject::Kind::bytes:
      return fmt::format("a byte string of {} bytes", object.size);
    case PickleObject::Kind::boolean:
      return object.value ? "True" : "False";
    case PickleObject::Kind::list:
      return fmt::format("a list of {}", object.items.size());
    case PickleObject::Kind::tuple:
      return fmt::format("a tuple of {}", object.items.size());
  }
  return "an object";
}

}  // namespace pfc
