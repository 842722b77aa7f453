// Reads the statements of an arcface_torch config file (its configs/*.py) without running
// Python. Such a file is data written as code:
//
//     from easydict import EasyDict as edict
//     config = edict()
//     config.num_epoch = 20
//     config.warmup_epoch = config.num_epoch // 10
//
// This reader accepts exactly that: the easydict import, the one `NAME = edict()` that makes
// the config object, and `NAME.KEY = EXPRESSION`, where an expression is built from literals
// (integers, floats, strings, True/False/None, tuples, lists), arithmetic (+ - * / // % **,
// unary signs, parentheses) and keys set earlier in the same file. Everything else (another
// import, a call, a loop, a condition, a variable) is refused with its line and the reason:
// a Python file can carry code, and a config must never run any.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pfc {

// A Python value of the kinds a config holds.
struct PyValue {
  enum class Kind { none, boolean, integer, floating, string, list, tuple };
  Kind kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0.0;
  std::string string;
  std::vector<PyValue> items;  // list and tuple

  static PyValue none() { return {}; }
  bool is_number() const { return kind == Kind::integer || kind == Kind::floating; }
  bool is_sequence() const { return kind == Kind::list || kind == Kind::tuple; }
  double as_double() const { return kind == Kind::integer ? static_cast<double>(integer) : floating; }
};

// Python's repr of the value: 0.1, 'r50', (1.0, 0.5, 0.0), None.
std::string python_repr(const PyValue& value);

struct PythonAssignment {
  std::string key;
  PyValue value;
  int line = 0;
};

// Every `config.KEY = value` of the file in order (a key set twice appears twice). `origin`
// names the file in messages; a statement outside the accepted forms throws UsageError
// "ORIGIN:LINE: ...".
std::vector<PythonAssignment> read_python_assignments(std::string_view text,
                                                      const std::string& origin);

}  // namespace pfc
