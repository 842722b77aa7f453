// A reader for the one kind of Python pickle pfc accepts: insightface's verification files,
// a tree of byte strings, booleans, small integers, lists and tuples, written by Python 2
// (protocol 2) or Python 3 (protocols 2 to 5, with frames and MEMOIZE). It accepts exactly
// the opcodes such a tree needs and refuses every other one by name before reading further:
// a pickle can name code to run (GLOBAL, REDUCE, ...), and this reader never runs, imports or
// builds anything but these kinds of objects.
//
// Accepted: PROTO (2-5) FRAME STOP MARK EMPTY_LIST APPEND APPENDS EMPTY_TUPLE TUPLE TUPLE1
// TUPLE2 TUPLE3 NEWTRUE NEWFALSE BININT1 BININT2 BININT SHORT_BINSTRING BINSTRING
// SHORT_BINBYTES BINBYTES BINBYTES8 SHORT_BINUNICODE BINUNICODE BINUNICODE8 BINPUT LONG_BINPUT
// MEMOIZE BINGET LONG_BINGET.
//
// And one call, recognised by name and never made: Python 3 pickles bytes at protocol 2 as
// `_codecs.encode(text, 'latin1')` (GLOBAL '_codecs encode', the text, REDUCE). GLOBAL is
// accepted for that name only, REDUCE only to apply it to (text, 'latin1'), and the result is
// the bytes it would make: each character of the text one byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfc {

struct PickleObject {
  // text: a str (UTF-8); codecs_encode: the function _codecs.encode, before REDUCE applies it.
  enum class Kind { bytes, boolean, integer, list, tuple, text, codecs_encode };
  Kind kind = Kind::bytes;
  // bytes, text: where they lie in the pickle's data, or for bytes that _codecs.encode made
  // (`built`), in PickleDocument::built.
  std::size_t offset = 0, size = 0;
  bool built = false;
  bool value = false;                // boolean
  std::int64_t integer = 0;          // integer
  std::vector<std::size_t> items;    // list, tuple: indices into PickleDocument::objects
};

struct PickleDocument {
  // Every object built, each once (a memo lookup refers to the same index again).
  std::vector<PickleObject> objects;
  std::size_t root = 0;
  std::vector<std::uint8_t> built;  // the bytes _codecs.encode calls made

  const PickleObject& at(std::size_t index) const { return objects.at(index); }
  // The bytes of a bytes or text object; `data` is the pickle it was parsed from.
  std::span<const std::uint8_t> bytes(const PickleObject& object,
                                      std::span<const std::uint8_t> data) const {
    return (object.built ? std::span<const std::uint8_t>(built) : data)
        .subspan(object.offset, object.size);
  }
};

// Parses a whole pickle (nothing may follow its STOP). Throws a UsageError that says what is
// wrong and at which byte: a refused opcode by name, a truncated argument, an unbalanced MARK,
// an unknown memo key, a frame that does not end where it says.
PickleDocument parse_pickle(std::span<const std::uint8_t> data);

// "a byte string of 5 bytes", "True", "the integer 2", "a list of 3" (for messages about a
// document's shape).
std::string describe_pickle_object(const PickleObject& object);

}  // namespace pfc
