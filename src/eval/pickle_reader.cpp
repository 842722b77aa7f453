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

  void push_text(std::size_t size, std::size_t at, const char* what) {
    push_bytes(size, at, what);
    doc_.objects.back().kind = PickleObject::Kind::text;
  }

  void push_integer(std::int64_t value) {
    PickleObject o;
    o.kind = PickleObject::Kind::integer;
    o.integer = value;
    stack_.push_back(add(std::move(o)));
  }

  // GLOBAL's argument: the bytes up to the next newline (protocol 0's line format).
  std::string line(std::size_t at, const char* what) {
    const std::size_t end = frame_end_ != kNoFrame ? frame_end_ : data_.size();
    std::size_t n = 0;
    while (pos_ + n < end && data_[pos_ + n] != '\n') ++n;
    if (pos_ + n == end)
      fail(at, fmt::format("{} has no end of line before the {}: truncated", what,
                           end == data_.size() ? "end of the file" : "end of its frame"));
    const std::uint8_t* p = take(n + 1, at, what);
    return std::string(reinterpret_cast<const char*>(p), n);
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
        check_no_function(at);
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
      case 'K':  // BININT1
        push_integer(static_cast<std::int64_t>(little_endian(1, at, "BININT1's value")));
        return false;
      case 'M':  // BININT2
        push_integer(static_cast<std::int64_t>(little_endian(2, at, "BININT2's value")));
        return false;
      case 'J':  // BININT: signed
        push_integer(static_cast<std::int32_t>(little_endian(4, at, "BININT's value")));
        return false;
      case 0x8c:  // SHORT_BINUNICODE
        push_text(little_endian(1, at, "a short text's length"), at, "a short text");
        return false;
      case 'X':  // BINUNICODE
        push_text(little_endian(4, at, "BINUNICODE's length"), at, "a text");
        return false;
      case 0x8d: {  // BINUNICODE8
        const std::uint64_t length = little_endian(8, at, "BINUNICODE8's length");
        if (length > data_.size() - pos_)
          fail(at, fmt::format("BINUNICODE8 of {} bytes but the file ends after {}: truncated",
                               length, data_.size() - pos_));
        push_text(static_cast<std::size_t>(length), at, "a text");
        return false;
      }
      case 'c':  // GLOBAL
        push_global(at);
        return false;
      case 'R':  // REDUCE
        reduce(at);
        return false;
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

  // ---- Python 3's bytes at protocol 2: _codecs.encode(text, 'latin1') ------------------------

  void push_global(std::size_t at) {
    const std::string module = line(at, "GLOBAL's module");
    const std::string name = line(at, "GLOBAL's name");
    if (module != "_codecs" || name != "encode")
      fail(at, fmt::format("opcode {} names {}.{}: it makes the reader import or call code, "
                           "which pfc never does; the one global a verification file may name "
                           "is _codecs.encode (how Python 3 writes bytes at protocol 2)",
                           opcode_label('c'), module, name));
    PickleObject o;
    o.kind = PickleObject::Kind::codecs_encode;
    stack_.push_back(add(std::move(o)));
  }

  // REDUCE of _codecs.encode on (text, 'latin1'): the text's characters as bytes, made here.
  void reduce(std::size_t at) {
    need(2, at, 'R');
    const PickleObject& function = doc_.objects[stack_[stack_.size() - 2]];
    const PickleObject& args = doc_.objects[stack_.back()];
    if (function.kind != PickleObject::Kind::codecs_encode)
      fail(at, fmt::format("opcode {} calls {}: it makes the reader import or call code, which "
                           "pfc never does; it reads only _codecs.encode(text, 'latin1')",
                           opcode_label('R'), describe_pickle_object(function)));
    const bool pair = args.kind == PickleObject::Kind::tuple && args.items.size() == 2;
    if (!pair || doc_.objects[args.items[0]].kind != PickleObject::Kind::text ||
        doc_.objects[args.items[1]].kind != PickleObject::Kind::text)
      fail(at, fmt::format("opcode {} calls _codecs.encode with {}, not (text, 'latin1')",
                           opcode_label('R'), describe_pickle_object(args)));
    const PickleObject& text = doc_.objects[args.items[0]];
    const std::span<const std::uint8_t> encoding =
        data_.subspan(doc_.objects[args.items[1]].offset, doc_.objects[args.items[1]].size);
    if (std::string_view(reinterpret_cast<const char*>(encoding.data()), encoding.size()) !=
        "latin1")
      fail(at, fmt::format("opcode {} calls _codecs.encode with the encoding '{}'; pfc reads the "
                           "'latin1' that Python writes for bytes",
                           opcode_label('R'),
                           std::string(encoding.begin(), encoding.end())));
    PickleObject bytes;
    bytes.kind = PickleObject::Kind::bytes;
    bytes.built = true;
    bytes.offset = doc_.built.size();
    latin1_bytes(data_.subspan(text.offset, text.size), text.offset, doc_.built);
    bytes.size = doc_.built.size() - bytes.offset;
    stack_.resize(stack_.size() - 2);
    stack_.push_back(add(std::move(bytes)));
  }

  // The code points of UTF-8 `text` (at byte `at` of the pickle), each below 256, as bytes.
  void latin1_bytes(std::span<const std::uint8_t> text, std::size_t at,
                    std::vector<std::uint8_t>& out) const {
    for (std::size_t i = 0; i < text.size();) {
      const std::uint8_t lead = text[i];
      std::uint32_t code = lead;
      std::size_t length = 1;
      if (lead >= 0x80) {
        length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
        if (length == 0 || i + length > text.size())
          fail(at + i, "the text _codecs.encode is given is not UTF-8");
        code = lead & (0xFF >> (length + 1));
        for (std::size_t k = 1; k < length; ++k) {
          if ((text[i + k] & 0xC0) != 0x80)
            fail(at + i, "the text _codecs.encode is given is not UTF-8");
          code = (code << 6) | (text[i + k] & 0x3F);
        }
        if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000))
          fail(at + i, "the text _codecs.encode is given is not UTF-8 (an overlong encoding)");
      }
      if (code > 0xFF)
        fail(at + i, fmt::format("the text _codecs.encode is given holds the character U+{:04X}, "
                                 "beyond latin1: not bytes",
                                 code));
      out.push_back(static_cast<std::uint8_t>(code));
      i += length;
    }
  }

  // The function itself must not be part of the value: only what it made.
  void check_no_function(std::size_t at) const {
    std::vector<bool> seen(doc_.objects.size(), false);
    std::vector<std::size_t> pending = {doc_.root};
    while (!pending.empty()) {
      const std::size_t i = pending.back();
      pending.pop_back();
      if (seen[i]) continue;
      seen[i] = true;
      const PickleObject& o = doc_.objects[i];
      if (o.kind == PickleObject::Kind::codecs_encode)
        fail(at, "STOP: the value holds the function _codecs.encode itself, not bytes it made");
      pending.insert(pending.end(), o.items.begin(), o.items.end());
    }
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
    case PickleObject::Kind::integer:
      return fmt::format("the integer {}", object.integer);
    case PickleObject::Kind::text:
      return fmt::format("a text string of {} bytes", object.size);
    case PickleObject::Kind::codecs_encode:
      return "the function _codecs.encode";
    case PickleObject::Kind::list:
      return fmt::format("a list of {}", object.items.size());
    case PickleObject::Kind::tuple:
      return fmt::format("a tuple of {}", object.items.size());
  }
  return "an object";
}

}  // namespace pfc
