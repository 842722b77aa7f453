// A reader for the Python pickles pfc accepts, which never runs, imports or builds anything a
// pickle names: it parses the opcode stream into a tree of plain objects and refuses every
// opcode the caller's vocabulary lacks by name, before reading further. Python 2 (protocol 2)
// and Python 3 (protocols 2 to 5, with frames and MEMOIZE) pickles are read.
//
// The default vocabulary is that of insightface's verification files: a tree of byte strings,
// booleans, small integers, texts, lists and tuples. Accepted: PROTO (2-5) FRAME STOP MARK
// EMPTY_LIST APPEND APPENDS EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 NEWTRUE NEWFALSE BININT1
// BININT2 BININT SHORT_BINSTRING BINSTRING SHORT_BINBYTES BINBYTES BINBYTES8 SHORT_BINUNICODE
// BINUNICODE BINUNICODE8 BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET.
//
// In every vocabulary one call is recognised by name and never made: Python 3 pickles bytes at
// protocol 2 as `_codecs.encode(text, 'latin1')` (GLOBAL '_codecs encode', the text, REDUCE).
// REDUCE applies it only to (text, 'latin1'), and the result is the bytes it would make: each
// character of the text one byte.
//
// A vocabulary with `objects` adds None, long integers and dicts (NONE LONG1 EMPTY_DICT DICT
// SETITEM SETITEMS); one that names `globals` adds GLOBAL and STACK_GLOBAL of exactly those
// names (any other is refused by name), REDUCE (a call of such a global, recorded, not made)
// and BUILD on its result; one with `persistent_ids` adds BINPERSID (the id recorded for the
// caller to resolve).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pfc {

struct PickleObject {
  enum class Kind {
    bytes, boolean, list, tuple, integer,
    text,           // a str, UTF-8
    codecs_encode,  // the function _codecs.encode, before REDUCE applies it
    // with PickleVocabulary::objects
    none, dict,
    global,         // a name GLOBAL gave ("module.name"); nothing is imported
    call,           // REDUCE of a global: items {the global, its argument tuple}; not made
    persistent_id,  // BINPERSID: items {the id}
  };
  Kind kind = Kind::bytes;
  // bytes, text: where they lie in the pickle's data, or for bytes that _codecs.encode made
  // (`built`), in PickleDocument::built.
  std::size_t offset = 0, size = 0;
  bool built = false;
  bool value = false;                // boolean
  std::int64_t integer = 0;          // integer
  std::string text;                  // text (UTF-8 as written); global: "module.name"
  std::vector<std::size_t> items;    // list, tuple, call, persistent_id: indices into objects
  // dict, and a call's result that SETITEM(S) filled (an OrderedDict): (key, value) indices,
  // in the order they were set.
  std::vector<std::pair<std::size_t, std::size_t>> entries;
  std::optional<std::size_t> state;  // call: what BUILD gave its result
};

// What a kind of file may hold, and how messages name it.
struct PickleVocabulary {
  std::string file_kind = "a verification file";
  std::string contents = "byte strings, booleans, integers, texts, lists and tuples";  // "holds only ..."
  bool objects = false;              // None, long integers, dicts
  std::vector<std::string> globals;  // "module.name" a GLOBAL may name (needs objects)
  bool persistent_ids = false;       // BINPERSID
  // At most this many opcodes (each adds at most one object or stack entry, so this bounds
  // the memory a parse takes): a pickle beyond it is refused at that opcode, naming the bound.
  std::size_t max_opcodes = SIZE_MAX;
  std::string opcode_bound;  // how messages name max_opcodes' reason
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
// an unknown memo key, a frame that does not end where it says, more opcodes than the
// vocabulary's max_opcodes.
PickleDocument parse_pickle(std::span<const std::uint8_t> data,
                            const PickleVocabulary& vocabulary = {});

// "a byte string of 3 bytes", "True", "a list of 3", "the integer 7", "a call of
// collections.OrderedDict", ... (for messages about a document's shape).
std::string describe_pickle_object(const PickleObject& object);

}  // namespace pfc
