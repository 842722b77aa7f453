#include "eval/pickle_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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
  Parser(std::span<const std::uint8_t> data, const PickleVocabulary& vocabulary)
      : data_(data), vocabulary_(vocabulary) {}

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
      if (++opcodes_ > vocabulary_.max_opcodes)
        fail(at, fmt::format("more than {} opcodes, {}", vocabulary_.max_opcodes,
                             vocabulary_.opcode_bound));
      const std::uint8_t code = take(1, at, "an opcode")[0];
      if (at > 0 && code == 0x80) fail(at, "PROTO appears again after the start");
      if (apply(code, at)) break;
    }
    if (pos_ != data_.size())
      fail(pos_, fmt::format("{} bytes follow STOP; {} holds one pickle",
                             data_.size() - pos_, vocabulary_.file_kind));
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
        push_text(little_endian(1, at, "SHORT_BINUNICODE's length"), at);
        return false;
      case 'X':  // BINUNICODE
        push_text(little_endian(4, at, "BINUNICODE's length"), at);
        return false;
      case 0x8d:  // BINUNICODE8
        push_text(little_endian(8, at, "BINUNICODE8's length"), at);
        return false;
      case 'c': {  // GLOBAL: "module\nname\n"
        const std::string module = line(at, "GLOBAL's module");
        push_global(module, line(at, "GLOBAL's name"), at, code);
        return false;
      }
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
    if (vocabulary_.objects && apply_object(code, at)) return false;
    const OpcodeName* op = find_opcode(code);
    if (op == nullptr) fail(at, fmt::format("{} is not a pickle opcode", opcode_label(code)));
    if (op->runs_code)
      fail(at, fmt::format("opcode {} is refused: it makes the reader import or call code, "
                           "which pfc never does; {} holds only {}",
                           opcode_label(code), vocabulary_.file_kind, vocabulary_.contents));
    fail(at, fmt::format("opcode {} is refused: {} holds only {}", opcode_label(code),
                         vocabulary_.file_kind, vocabulary_.contents));
  }

  // The opcodes of PickleVocabulary::objects, globals and persistent_ids; false for one the
  // vocabulary lacks (refused by the caller).
  bool apply_object(std::uint8_t code, std::size_t at) {
    using Kind = PickleObject::Kind;
    const bool calls = !vocabulary_.globals.empty();
    switch (code) {
      case 'N': {  // NONE
        PickleObject o;
        o.kind = Kind::none;
        stack_.push_back(add(std::move(o)));
        return true;
      }
      case 0x8a: {  // LONG1: a two's-complement integer of n bytes
        const std::uint64_t n = little_endian(1, at, "LONG1's length");
        if (n > 8) fail(at, fmt::format("LONG1 of {} bytes: pfc reads integers of 64 bits", n));
        std::uint64_t v = n == 0 ? 0 : little_endian(n, at, "LONG1's value");
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~std::uint64_t{0} << (8 * n);
        push_integer(static_cast<std::int64_t>(v));
        return true;
      }
      case '}':  // EMPTY_DICT
        push_dict({});
        return true;
      case 'd':  // DICT
        push_dict(pop_to_mark(at, code));
        return true;
      case 's': {  // SETITEM
        const std::vector<std::size_t> pair = pop_items(2, at, code);
        set_items(pair, at, code);
        return true;
      }
      case 'u': {  // SETITEMS
        const std::vector<std::size_t> pairs = pop_to_mark(at, code);
        set_items(pairs, at, code);
        return true;
      }
      case 0x93: {  // STACK_GLOBAL
        if (!calls) return false;
        const std::vector<std::size_t> names = pop_items(2, at, code);
        const PickleObject& module = doc_.objects[names[0]];
        const PickleObject& name = doc_.objects[names[1]];
        if (module.kind != Kind::text || name.kind != Kind::text)
          fail(at, fmt::format("STACK_GLOBAL of {} and {}, not two texts",
                               describe_pickle_object(module), describe_pickle_object(name)));
        push_global(module.text, name.text, at, code);
        return true;
      }
      case 'b': {  // BUILD: the state is kept beside the call's result
        if (!calls) return false;
        const std::size_t state = pop_items(1, at, code)[0];
        need(1, at, code);
        PickleObject& target = doc_.objects[stack_.back()];
        if (target.kind != Kind::call || target.state)
          fail(at, fmt::format("BUILD on {}: only the result of a REDUCE takes a state, once",
                               describe_pickle_object(target)));
        target.state = state;
        return true;
      }
      case 'Q': {  // BINPERSID: the id is recorded for the caller to resolve
        if (!vocabulary_.persistent_ids) return false;
        PickleObject o;
        o.kind = Kind::persistent_id;
        o.items = pop_items(1, at, code);
        stack_.push_back(add(std::move(o)));
        return true;
      }
      default:
        return false;
    }
  }

  void push_integer(std::int64_t value) {
    PickleObject o;
    o.kind = PickleObject::Kind::integer;
    o.integer = value;
    stack_.push_back(add(std::move(o)));
  }

  void push_text(std::uint64_t length, std::size_t at) {
    if (length > data_.size() - pos_)
      fail(at, fmt::format("a text of {} bytes but the file ends after {}: truncated", length,
                           data_.size() - pos_));
    const auto size = static_cast<std::size_t>(length);
    const std::uint8_t* p = take(size, at, "a text");
    PickleObject o;
    o.kind = PickleObject::Kind::text;
    o.offset = pos_ - size;
    o.size = size;
    o.text.assign(reinterpret_cast<const char*>(p), size);
    stack_.push_back(add(std::move(o)));
  }

  // GLOBAL's arguments: text up to a newline.
  std::string line(std::size_t at, const char* what) {
    std::string text;
    while (true) {
      const char c = static_cast<char>(take(1, at, what)[0]);
      if (c == '\n') return text;
      if (text.size() >= 256)
        fail(at, fmt::format("{} runs past 256 bytes without a newline", what));
      text += c;
    }
  }

  void push_global(const std::string& module, const std::string& name, std::size_t at,
                   std::uint8_t code) {
    const std::string full = module + "." + name;
    PickleObject o;
    if (full == "_codecs.encode") {
      o.kind = PickleObject::Kind::codecs_encode;
      stack_.push_back(add(std::move(o)));
      return;
    }
    const auto& allowed = vocabulary_.globals;
    if (allowed.empty())
      fail(at, fmt::format("opcode {} names {}: it makes the reader import or call code, which "
                           "pfc never does; the one global {} may name is _codecs.encode (how "
                           "Python 3 writes bytes at protocol 2)",
                           opcode_label(code), full, vocabulary_.file_kind));
    if (std::find(allowed.begin(), allowed.end(), full) == allowed.end())
      fail(at, fmt::format("{} '{}' is refused: {} names only {}; pfc never imports or runs "
                           "what a pickle names",
                           opcode_label(code), full, vocabulary_.file_kind,
                           fmt::join(allowed, ", ")));
    o.kind = PickleObject::Kind::global;
    o.text = full;
    stack_.push_back(add(std::move(o)));
  }

  // REDUCE: _codecs.encode(text, 'latin1') is made here (the text's characters as bytes); a call
  // of a global the vocabulary names is recorded, never made; anything else is refused.
  void reduce(std::size_t at) {
    using Kind = PickleObject::Kind;
    need(2, at, 'R');
    const std::size_t function_index = stack_[stack_.size() - 2];
    const std::size_t args_index = stack_.back();
    const PickleObject& function = doc_.objects[function_index];
    const PickleObject& args = doc_.objects[args_index];
    if (function.kind == Kind::codecs_encode) {
      const std::size_t bytes = encode_latin1(args, at);
      stack_.resize(stack_.size() - 2);
      stack_.push_back(bytes);
      return;
    }
    if (vocabulary_.globals.empty())
      fail(at, fmt::format("opcode {} calls {}: it makes the reader import or call code, which "
                           "pfc never does; it reads only _codecs.encode(text, 'latin1')",
                           opcode_label('R'), describe_pickle_object(function)));
    if (function.kind != Kind::global || args.kind != Kind::tuple)
      fail(at, fmt::format("REDUCE of {} with {}: only a named global with a tuple of arguments "
                           "is read",
                           describe_pickle_object(function), describe_pickle_object(args)));
    PickleObject o;
    o.kind = Kind::call;
    o.items = {function_index, args_index};
    stack_.resize(stack_.size() - 2);
    stack_.push_back(add(std::move(o)));
  }

  // The bytes object _codecs.encode makes of `args` = (text, 'latin1'); its index.
  std::size_t encode_latin1(const PickleObject& args, std::size_t at) {
    const bool pair = args.kind == PickleObject::Kind::tuple && args.items.size() == 2;
    if (!pair || doc_.objects[args.items[0]].kind != PickleObject::Kind::text ||
        doc_.objects[args.items[1]].kind != PickleObject::Kind::text)
      fail(at, fmt::format("opcode {} calls _codecs.encode with {}, not (text, 'latin1')",
                           opcode_label('R'), describe_pickle_object(args)));
    const PickleObject& text = doc_.objects[args.items[0]];
    const std::string& encoding = doc_.objects[args.items[1]].text;
    if (encoding != "latin1")
      fail(at, fmt::format("opcode {} calls _codecs.encode with the encoding '{}'; pfc reads the "
                           "'latin1' that Python writes for bytes",
                           opcode_label('R'), encoding));
    PickleObject bytes;
    bytes.kind = PickleObject::Kind::bytes;
    bytes.built = true;
    bytes.offset = doc_.built.size();
    latin1_bytes(data_.subspan(text.offset, text.size), text.offset, doc_.built);
    bytes.size = doc_.built.size() - bytes.offset;
    return add(std::move(bytes));
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
      for (const auto& [key, value] : o.entries) pending.insert(pending.end(), {key, value});
      if (o.state) pending.push_back(*o.state);
    }
  }

  void push_dict(const std::vector<std::size_t>& pairs) {
    PickleObject o;
    o.kind = PickleObject::Kind::dict;
    stack_.push_back(add(std::move(o)));
    set_items(pairs, 0, 'd');
  }

  // Sets key, value, key, value, ... on the dict (or OrderedDict) on top of the stack.
  void set_items(const std::vector<std::size_t>& pairs, std::size_t at, std::uint8_t code) {
    if (pairs.size() % 2 != 0)
      fail(at, fmt::format("{} with {} objects, not key-value pairs", opcode_label(code),
                           pairs.size()));
    need(1, at, code);
    PickleObject& target = doc_.objects[stack_.back()];
    if (target.kind != PickleObject::Kind::dict && target.kind != PickleObject::Kind::call)
      fail(at, fmt::format("{} sets items of {}, not a dict", opcode_label(code),
                           describe_pickle_object(target)));
    for (std::size_t i = 0; i < pairs.size(); i += 2)
      target.entries.emplace_back(pairs[i], pairs[i + 1]);
  }

  std::span<const std::uint8_t> data_;
  const PickleVocabulary& vocabulary_;
  std::size_t pos_ = 0;
  std::size_t opcodes_ = 0;
  std::size_t frame_end_ = kNoFrame;
  PickleDocument doc_;
  std::vector<std::size_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::size_t> memo_;
};

}  // namespace

PickleDocument parse_pickle(std::span<const std::uint8_t> data,
                            const PickleVocabulary& vocabulary) {
  return Parser(data, vocabulary).parse();
}

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
    case PickleObject::Kind::integer:
      return fmt::format("the integer {}", object.integer);
    case PickleObject::Kind::none:
      return "None";
    case PickleObject::Kind::text:
      return fmt::format("a text string '{}'", object.text.substr(0, 64));
    case PickleObject::Kind::codecs_encode:
      return "the function _codecs.encode";
    case PickleObject::Kind::dict:
      return fmt::format("a dict of {}", object.entries.size());
    case PickleObject::Kind::global:
      return fmt::format("the name {}", object.text);
    case PickleObject::Kind::call:
      return "a call";
    case PickleObject::Kind::persistent_id:
      return "a persistent id";
  }
  return "an object";
}

}  // namespace pfc
