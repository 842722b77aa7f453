// A reader for the one kind of Python pickle pfc accepts: insightface's verification files,
// a tree of byte strings, booleans, lists and tuples, written by Python 2 (protocol 2) or
// Python 3 (protocols 2 to 5, with frames and MEMOIZE). It accepts exactly the opcodes such
// a tree needs and refuses every other one by name before reading further: a pickle can name
// code to run (GLOBAL, REDUCE, ...), and this reader never runs, imports or builds anything
// but the four kinds of objects.
//
// Accepted: PROTO (2-5) FRAME STOP MARK EMPTY_LIST APPEND APPENDS EMPTY_TUPLE TUPLE TUPLE1
// TUPLE2 TUPLE3 NEWTRUE NEWFALSE SHORT_BINSTRING BINSTRING SHORT_BINBYTES BINBYTES BINBYTES8
// BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfc {

struct PickleObject {
  enum class Kind { bytes, boolean, list, tuple };
  Kind kind = Kind::bytes;
  std::size_t offset = 0, size = 0;  // bytes: where they lie in the pickle's data
  bool value = false;                // boolean
  std::vector<std::size_t> items;    // list, tuple: indices into PickleDocument::objects
};

struct PickleDocument {
  // Every object built, each once (a memo lookup refers to the same index again).
  std::vector<PickleObject> objects;
  std::size_t root = 0;

  const PickleObject& at(std::size_t index) const { return objects.at(index); }
};

// Parses a whole pickle (nothing may follow its STOP). Throws a UsageError that says what is
// wrong and at which byte: a refused opcode by name, a truncated argument, an unbalanced MARK,
// an unknown memo key, a frame that does not end where it says.
PickleDocument parse_pickle(std::span<const std::uint8_t> data);

// "bytes", "a boolean", "a list of 3", "a tuple of 2" (for messages about a document's shape).
std::string describe_pickle_object(const PickleObject& object);

}  // namespace pfc
