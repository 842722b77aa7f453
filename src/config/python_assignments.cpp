#include "config/python_assignments.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "core/error.h"

namespace pfc {

namespace {

// ---- tokens -------------------------------------------------------------------------------

enum class TokenKind { name, integer, floating, string, op, indent, newline, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;  // a name, an operator, or a string's decoded contents
  std::int64_t integer = 0;
  double floating = 0.0;
  int line = 0;
};

// Python's lexical rules for the tokens a config uses: logical lines end at a newline outside
// brackets (or continue after a backslash), comments run to the end of the line, strings may
// be single, double or triple quoted with an r/u prefix.
class Lexer {
 public:
  Lexer(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    bool line_start = true;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (line_start) {
        line_start = false;
        const std::size_t indent_end = text_.find_first_not_of(" \t\f", pos_);
        const std::size_t at = indent_end == std::string_view::npos ? text_.size() : indent_end;
        const bool blank = at == text_.size() || text_[at] == '\n' || text_[at] == '\r' ||
                           text_[at] == '#';
        if (at != pos_ && !blank && depth_ == 0)
          out.push_back({TokenKind::indent, "", 0, 0.0, line_});
        pos_ = at;
        continue;
      }
      if (c == '\n') {
        ++pos_;
        if (depth_ == 0 && !out.empty() && out.back().kind != TokenKind::newline)
          out.push_back({TokenKind::newline, "", 0, 0.0, line_});
        ++line_;
        line_start = depth_ == 0;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '\\') {
        std::size_t next = pos_ + 1;
        if (next < text_.size() && text_[next] == '\r') ++next;
        if (next >= text_.size() || text_[next] != '\n')
          fail(line_, "a backslash outside a string must end the line");
        pos_ = next + 1;
        ++line_;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && pos_ + 1 < text_.size() &&
                  std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
        out.push_back(number());
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const std::size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
          ++pos_;
        const std::string word(text_.substr(start, pos_ - start));
        if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"') &&
            word.size() <= 2) {
          out.push_back(string_literal(word));
        } else {
          out.push_back({TokenKind::name, word, 0, 0.0, line_});
        }
      } else if (c == '\'' || c == '"') {
        out.push_back(string_literal(""));
      } else {
        out.push_back(op());
      }
    }
    if (!out.empty() && out.back().kind != TokenKind::newline)
      out.push_back({TokenKind::newline, "", 0, 0.0, line_});
    if (depth_ != 0) fail(line_, "a bracket opened in this file is never closed");
    out.push_back({TokenKind::end, "", 0, 0.0, line_});
    return out;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw UsageError(fmt::format("{}:{}: {}", origin_, line, why));
  }

  Token op() {
    static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">=", "+=", "-=",
                                                "*=", "/=", "->", ":="};
    const std::string_view rest = text_.substr(pos_);
    for (std::string_view two : kTwo)
      if (rest.starts_with(two)) {
        pos_ += 2;
        return {TokenKind::op, std::string(two), 0, 0.0, line_};
      }
    const char c = text_[pos_++];
    if (c == '(' || c == '[' || c == '{') ++depth_;
    if (c == ')' || c == ']' || c == '}') {
      if (depth_ == 0) fail(line_, fmt::format("'{}' closes no bracket", c));
      --depth_;
    }
    if (std::string_view("()[]{},.:;=+-*/%<>@&|^~!").find(c) == std::string_view::npos)
      fail(line_, fmt::format("character '{}' is not part of the Python a config file uses",
                              c));
    return {TokenKind::op, std::string(1, c), 0, 0.0, line_};
  }

  Token number() {
    const std::size_t start = pos_;
    const int line = line_;
    auto digits = [&](auto is_digit) {
      while (pos_ < text_.size() && (is_digit(text_[pos_]) || text_[pos_] == '_')) ++pos_;
    };
    auto decimal = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
    int base = 10;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        std::string_view("xXoObB").find(text_[pos_ + 1]) != std::string_view::npos) {
      const char prefix = static_cast<char>(std::tolower(text_[pos_ + 1]));
      base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
      pos_ += 2;
      digits([](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) != 0; });
    } else {
      digits(decimal);
    }
    bool is_float = false;
    if (base == 10 && pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      digits(decimal);
    }
    if (base == 10 && pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      digits(decimal);
    }
    if (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_]))))
      fail(line, fmt::format("'{}' is not a number this reader takes (complex numbers and "
                             "suffixes are not config values)",
                             text_.substr(start, pos_ - start + 1)));
    std::string clean;
    for (char ch : text_.substr(start, pos_ - start))
      if (ch != '_') clean += ch;
    Token t{is_float ? TokenKind::floating : TokenKind::integer, clean, 0, 0.0, line};
    try {
      std::size_t used = 0;
      if (is_float) {
        t.floating = std::stod(clean, &used);
      } else {
        t.integer = static_cast<std::int64_t>(
            std::stoull(base == 10 ? clean : clean.substr(2), &used, base));
        if (base != 10) used += 2;
        if (clean.size() > 1 && base == 10 && clean[0] == '0' &&
            clean.find_first_not_of('0') != std::string::npos)
          fail(line, fmt::format("'{}': Python 3 has no leading-zero integers", clean));
      }
      if (used != clean.size()) throw std::invalid_argument(clean);
    } catch (const std::out_of_range&) {
      fail(line, fmt::format("number '{}' is out of range (64-bit integers, doubles)", clean));
    } catch (const std::invalid_argument&) {
      fail(line, fmt::format("'{}' is not a number", clean));
    }
    if (!is_float && t.integer < 0)
      fail(line, fmt::format("number '{}' is out of range (64-bit integers)", clean));
    return t;
  }

  Token string_literal(const std::string& prefix) {
    bool raw = false;
    for (char p : prefix) {
      const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(p)));
      if (lower == 'r') raw = true;
      else if (lower == 'f')
        fail(line_, "an f-string evaluates code; write the value itself");
      else if (lower == 'b')
        fail(line_, "a bytes literal is not a config value");
      else if (lower != 'u')
        fail(line_, fmt::format("'{}' is not a string prefix", prefix));
    }
    const int line = line_;
    const char quote = text_[pos_];
    const bool triple = text_.substr(pos_, 3) == std::string(3, quote);
    pos_ += triple ? 3 : 1;
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) fail(line, "a string that starts here is never closed");
      const char c = text_[pos_];
      if (triple ? text_.substr(pos_, 3) == std::string(3, quote) : c == quote) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (c == '\n') {
        if (!triple) fail(line, "a string that starts here is never closed on its line");
        ++line_;
      }
      if (c == '\\' && pos_ + 1 < text_.size()) {
        const char e = text_[pos_ + 1];
        pos_ += 2;
        if (e == '\n') {
          ++line_;
          if (raw) value += "\\\n";
          continue;
        }
        if (raw) {
          value += '\\';
          value += e;
          continue;
        }
        escape(e, line, value);
        continue;
      }
      value += c;
      ++pos_;
    }
    return {TokenKind::string, value, 0, 0.0, line};
  }

  // The escape `\e` of a string (its backslash and `e` already read), as Python 3 decodes it
  // into `value` (UTF-8).
  void escape(char e, int line, std::string& value) {
    switch (e) {
      case '\\': value += '\\'; return;
      case '\'': value += '\''; return;
      case '"': value += '"'; return;
      case 'a': value += '\a'; return;
      case 'b': value += '\b'; return;
      case 'f': value += '\f'; return;
      case 'n': value += '\n'; return;
      case 'r': value += '\r'; return;
      case 't': value += '\t'; return;
      case 'v': value += '\v'; return;
      case 'x': return append_utf8(hex_digits(2, "\\xXX", line), line, value);
      case 'u': return append_utf8(hex_digits(4, "\\uXXXX", line), line, value);
      case 'U': return append_utf8(hex_digits(8, "\\UXXXXXXXX", line), line, value);
      case 'N':
        fail(line, "\\N{...} names a character by its Unicode name, which this reader does not "
                   "look up; write the character itself");
      default:
        break;
    }
    if (e >= '0' && e <= '7') {  // one to three octal digits
      std::uint32_t code = static_cast<std::uint32_t>(e - '0');
      for (int i = 0; i < 2 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7';
           ++i)
        code = code * 8 + static_cast<std::uint32_t>(text_[pos_++] - '0');
      return append_utf8(code, line, value);
    }
    // Python keeps an unknown escape as written.
    value += '\\';
    value += e;
  }

  std::uint32_t hex_digits(int count, const char* form, int line) {
    std::uint32_t code = 0;
    for (int i = 0; i < count; ++i) {
      const char c = pos_ < text_.size() ? text_[pos_] : '\0';
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        fail(line, fmt::format("truncated {} escape", form));
      code = code * 16 + static_cast<std::uint32_t>(
                             std::isdigit(static_cast<unsigned char>(c))
                                 ? c - '0'
                                 : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
      ++pos_;
    }
    return code;
  }

  void append_utf8(std::uint32_t code, int line, std::string& value) const {
    if (code > 0x10FFFF) fail(line, fmt::format("\\U{:08X} is beyond Unicode", code));
    if (code >= 0xD800 && code <= 0xDFFF)
      fail(line, fmt::format("\\u{:04x} is a lone surrogate, which no UTF-8 text holds", code));
    if (code < 0x80) {
      value += static_cast<char>(code);
    } else if (code < 0x800) {
      value += static_cast<char>(0xC0 | (code >> 6));
      value += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      value += static_cast<char>(0xE0 | (code >> 12));
      value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      value += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      value += static_cast<char>(0xF0 | (code >> 18));
      value += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      value += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string_view text_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int depth_ = 0;  // open brackets: newlines inside them do not end a statement
};

// ---- values -------------------------------------------------------------------------------

// Bounds no config comes near (arcface_torch's nest a tuple in a statement and hold a few
// short strings), so that a hostile file is refused at once instead of exhausting the stack
// or the memory: Python's own parser stops at 200 nested parentheses.
constexpr int kMaxNesting = 100;
// Items plus characters, counting every nested value (see value_size).
constexpr std::int64_t kMaxValueSize = std::int64_t{1} << 16;
constexpr std::int64_t kMaxFileSize = std::int64_t{1} << 20;

// How deep `value` nests: 0 for a scalar, 1 for a list of scalars.
int value_depth(const PyValue& value) {
  int deepest = 0;
  for (const PyValue& item : value.items) deepest = std::max(deepest, value_depth(item));
  return value.is_sequence() ? deepest + 1 : 0;
}

// One per value, plus a string's characters: what holding the value costs, in units.
std::int64_t value_size(const PyValue& value) {
  std::int64_t size = 1 + static_cast<std::int64_t>(value.string.size());
  for (const PyValue& item : value.items) size += value_size(item);
  return size;
}

std::string_view kind_name(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::boolean: return "a boolean";
    case PyValue::Kind::integer: return "an integer";
    case PyValue::Kind::floating: return "a float";
    case PyValue::Kind::string: return "a string";
    case PyValue::Kind::list: return "a list";
    case PyValue::Kind::tuple: return "a tuple";
  }
  return "a value";
}

PyValue make_integer(std::int64_t v) {
  PyValue out;
  out.kind = PyValue::Kind::integer;
  out.integer = v;
  return out;
}

PyValue make_floating(double v) {
  PyValue out;
  out.kind = PyValue::Kind::floating;
  out.floating = v;
  return out;
}

// ---- statements and expressions -------------------------------------------------------------

class Reader {
 public:
  Reader(std::vector<Token> tokens, const std::string& origin)
      : tokens_(std::move(tokens)), origin_(origin) {}

  std::vector<PythonAssignment> statements() {
    while (peek().kind != TokenKind::end) {
      statement();
      if (is_op(";")) {
        next();
        if (peek().kind == TokenKind::newline) next();
        continue;
      }
      if (peek().kind != TokenKind::newline)
        fail(peek().line, fmt::format("unexpected '{}' after the statement", show(peek())));
      next();
    }
    return std::move(assignments_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& why) const {
    throw UsageError(fmt::format("{}:{}: {}", origin_, line, why));
  }

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() { return tokens_[std::min(at_++, tokens_.size() - 1)]; }
  bool is_op(std::string_view op, std::size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::op && peek(ahead).text == op;
  }
  bool is_name(std::string_view name, std::size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::name && peek(ahead).text == name;
  }
  static std::string show(const Token& t) {
    switch (t.kind) {
      case TokenKind::newline: return "end of line";
      case TokenKind::indent: return "indentation";
      case TokenKind::end: return "end of file";
      case TokenKind::string: return fmt::format("'{}'", t.text);
      default: return t.text;
    }
  }
  void expect_op(std::string_view op) {
    if (!is_op(op))
      fail(peek().line, fmt::format("expected '{}', found '{}'", op, show(peek())));
    next();
  }
  std::string expect_name(std::string_view what) {
    if (peek().kind != TokenKind::name)
      fail(peek().line, fmt::format("expected {}, found '{}'", what, show(peek())));
    return next().text;
  }

  void statement() {
    const Token& first = peek();
    if (first.kind == TokenKind::indent)
      fail(first.line, "an indented line is part of a block (if, for, def, with): code, not a "
                       "config assignment");
    if (is_name("from")) return from_import();
    if (is_name("import"))
      fail(first.line, fmt::format("'import {}' loads code; a config may import only "
                                   "easydict's EasyDict", peek(1).text));
    static constexpr std::string_view kCode[] = {
        "def", "class", "if", "elif", "else", "for", "while", "with", "try", "except",
        "finally", "lambda", "return", "yield", "del", "global", "nonlocal", "assert", "raise",
        "exec", "print", "pass", "async", "await"};
    for (std::string_view word : kCode)
      if (is_name(word))
        fail(first.line, fmt::format("'{}' is a Python statement, code rather than a config "
                                     "assignment", word));
    if (first.kind == TokenKind::string && peek(1).kind == TokenKind::newline) {
      next();  // a docstring
      return;
    }
    if (first.kind != TokenKind::name)
      fail(first.line, fmt::format("a statement must be 'config.KEY = value', found '{}'",
                                   show(first)));
    if (is_op("=", 1)) return make_config_object();
    if (first.text != config_name_ || config_name_.empty()) {
      if (is_op(".", 1) || is_op("(", 1))
        fail(first.line, fmt::format("'{}' is not the config object{}; only config.KEY = value "
                                     "statements are read",
                                     first.text,
                                     config_name_.empty() ? " (no 'config = edict()' before)"
                                                          : ""));
      fail(first.line, fmt::format("'{}' at the start of a statement is not a config "
                                   "assignment", first.text));
    }
    next();
    if (is_op("(", 0)) fail(first.line, "calling the config object is code");
    expect_op(".");
    const std::string key = expect_name("a key after 'config.'");
    if (is_op("(")) fail(first.line, fmt::format("{}.{}(...) is a call: code, not a value",
                                                 config_name_, key));
    if (peek().kind == TokenKind::op && peek().text.size() == 2 && peek().text[1] == '=')
      fail(first.line, fmt::format("'{}' changes a key in place: write its value instead",
                                   peek().text));
    expect_op("=");
    const int line = first.line;
    PyValue value = expression_list();
    if (is_op("=")) fail(line, "chained assignments are not config values");
    file_size_ += value_size(value);
    if (file_size_ > kMaxFileSize)
      fail(line, fmt::format("the values of this file hold more than {} items and characters; "
                             "a config holds far fewer",
                             kMaxFileSize));
    values_[key] = value;
    assignments_.push_back({key, std::move(value), line});
  }

  void from_import() {
    const int line = next().line;
    const std::string module = expect_name("a module name");
    if (module != "easydict" || !is_name("import"))
      fail(line, fmt::format("'from {} import ...' loads code; a config may import only "
                             "easydict's EasyDict",
                             module));
    next();
    const std::string name = expect_name("EasyDict");
    if (name != "EasyDict")
      fail(line, fmt::format("'from easydict import {}': only EasyDict is read", name));
    std::string alias = name;
    if (is_name("as")) {
      next();
      alias = expect_name("a name after 'as'");
    }
    factories_.push_back(alias);
  }

  void make_config_object() {
    const Token& name = next();
    next();  // '='
    const Token& factory = peek();
    const bool known = factory.kind == TokenKind::name &&
                       std::find(factories_.begin(), factories_.end(), factory.text) !=
                           factories_.end();
    if (!known || !is_op("(", 1) || !is_op(")", 2)) {
      if (factory.kind == TokenKind::name && is_op("(", 1))
        fail(name.line, fmt::format("'{} = {}(...)' is a call; the only one read is "
                                    "'{} = edict()' (easydict's EasyDict, imported above)",
                                    name.text, factory.text, name.text));
      fail(name.line, fmt::format("'{} = ...' sets a variable; only config.KEY = value "
                                  "statements are read (after 'config = edict()')",
                                  name.text));
    }
    if (!config_name_.empty())
      fail(name.line, fmt::format("a second config object '{}' (the first is '{}')", name.text,
                                  config_name_));
    at_ += 3;
    config_name_ = name.text;
  }

  // expression (',' expression)* [','] : a bare tuple when there is a comma.
  PyValue expression_list() {
    PyValue first = expression();
    if (!is_op(",")) return first;
    PyValue tuple;
    tuple.kind = PyValue::Kind::tuple;
    tuple.items.push_back(std::move(first));
    while (is_op(",")) {
      next();
      if (peek().kind == TokenKind::newline || is_op(";") || peek().kind == TokenKind::end)
        break;
      tuple.items.push_back(expression());
    }
    return tuple;
  }

  PyValue expression() {
    PyValue value = sum();
    static constexpr std::string_view kRefused[] = {"==", "!=", "<", ">", "<=", ">=", "&",
                                                    "|",  "^",  "<<", ">>", "@", ":="};
    for (std::string_view op : kRefused)
      if (is_op(op))
        fail(peek().line, fmt::format("operator '{}' is not config arithmetic", op));
    if (is_name("if") || is_name("and") || is_name("or") || is_name("not") ||
        is_name("in") || is_name("is") || is_name("for"))
      fail(peek().line, fmt::format("'{}' makes a condition or a loop: code, not a value",
                                    peek().text));
    return value;
  }

  PyValue sum() {
    PyValue left = term();
    while (is_op("+") || is_op("-")) {
      const Token& op = next();
      PyValue right = term();
      left = binary(op, left, right);
    }
    return left;
  }

  PyValue term() {
    PyValue left = factor();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& op = next();
      PyValue right = factor();
      left = binary(op, left, right);
    }
    return left;
  }

  PyValue factor() {
    if (is_op("-") || is_op("+")) {
      const Token& op = next();
      const Nested nested(*this, op.line);
      PyValue v = factor();
      if (!v.is_number())
        fail(op.line, fmt::format("unary '{}' on {}", op.text, kind_name(v.kind)));
      if (op.text == "+") return v;
      if (v.kind == PyValue::Kind::floating) return make_floating(-v.floating);
      if (v.integer == std::numeric_limits<std::int64_t>::min())
        fail(op.line, "integer out of range (64 bits)");
      return make_integer(-v.integer);
    }
    if (is_op("~")) fail(peek().line, "operator '~' is not config arithmetic");
    return power();
  }

  PyValue power() {
    PyValue base = atom();
    if (!is_op("**")) return base;
    const Token& op = next();
    const Nested nested(*this, op.line);
    PyValue exponent = factor();  // right-associative, binds tighter than a unary sign on its left
    return binary(op, base, exponent);
  }

  PyValue atom() {
    const Token& t = next();
    switch (t.kind) {
      case TokenKind::integer: return make_integer(t.integer);
      case TokenKind::floating: return make_floating(t.floating);
      case TokenKind::string: {
        PyValue s;
        s.kind = PyValue::Kind::string;
        s.string = t.text;
        while (peek().kind == TokenKind::string) s.string += next().text;  // "a" "b"
        return s;
      }
      case TokenKind::newline:
      case TokenKind::indent:
      case TokenKind::end: fail(t.line, "a value is missing");
      case TokenKind::op: return bracketed(t);
      case TokenKind::name: break;
    }
    if (t.text == "True" || t.text == "False") {
      PyValue b;
      b.kind = PyValue::Kind::boolean;
      b.boolean = t.text == "True";
      return b;
    }
    if (t.text == "None") return PyValue::none();
    if (t.text == config_name_ && !config_name_.empty() && is_op(".")) {
      next();
      const std::string key = expect_name("a key after 'config.'");
      if (is_op("(")) fail(t.line, fmt::format("{}.{}(...) is a call: code, not a value",
                                               config_name_, key));
      const auto it = values_.find(key);
      if (it == values_.end())
        fail(t.line, fmt::format("{}.{} is used before this file sets it (arcface_torch "
                                 "evaluates each config file on its own)",
                                 config_name_, key));
      return it->second;
    }
    if (is_op("(") || is_op("."))
      fail(t.line, fmt::format("'{}{}...' refers to code (a call or a module); a config value "
                               "is a literal, arithmetic, or an earlier config key",
                               t.text, peek().text));
    fail(t.line, fmt::format("name '{}' is not a value: a config value is a literal, "
                             "arithmetic, or an earlier config key",
                             t.text));
  }

  PyValue bracketed(const Token& open) {
    if (open.text != "(" && open.text != "[") {
      if (open.text == "{") fail(open.line, "dictionaries and sets are not config values here");
      fail(open.line, fmt::format("unexpected '{}'", open.text));
    }
    const Nested nested(*this, open.line);
    const std::string close = open.text == "(" ? ")" : "]";
    PyValue seq;
    seq.kind = open.text == "(" ? PyValue::Kind::tuple : PyValue::Kind::list;
    bool comma = false;
    while (!is_op(close)) {
      seq.items.push_back(expression());
      if (is_name("for")) fail(peek().line, "a comprehension is a loop: code, not a value");
      if (!is_op(",")) break;
      next();
      comma = true;
    }
    expect_op(close);
    // (x) is x; (x,) and () are tuples.
    if (open.text == "(" && seq.items.size() == 1 && !comma) return seq.items.front();
    check_built(seq, open.line);
    return seq;
  }

  PyValue binary(const Token& op, const PyValue& a, const PyValue& b) {
    const int line = op.line;
    const std::string& o = op.text;
    if (a.is_number() && b.is_number()) return arithmetic(line, o, a, b);
    if (o == "+" && a.kind == b.kind &&
        (a.kind == PyValue::Kind::string || a.is_sequence())) {
      check_size(value_size(a) + value_size(b) - 1, line);
      PyValue out = a;
      out.string += b.string;
      out.items.insert(out.items.end(), b.items.begin(), b.items.end());
      return out;
    }
    if (o == "*" && (a.kind == PyValue::Kind::integer || b.kind == PyValue::Kind::integer)) {
      const PyValue& seq = a.kind == PyValue::Kind::integer ? b : a;
      const std::int64_t n = a.kind == PyValue::Kind::integer ? a.integer : b.integer;
      if (seq.kind == PyValue::Kind::string || seq.is_sequence()) {
        const std::int64_t each = value_size(seq) - 1;  // what one repetition adds
        // Python repeats a sequence max(n, 0) times; an empty one any number of times is empty.
        const std::int64_t times = each == 0 ? 0 : std::max<std::int64_t>(n, 0);
        std::int64_t size = 0;
        if (__builtin_mul_overflow(each, times, &size) || __builtin_add_overflow(size, 1, &size))
          size = std::numeric_limits<std::int64_t>::max();
        check_size(size, line);
        PyValue out = seq;
        out.string.clear();
        out.items.clear();
        for (std::int64_t i = 0; i < times; ++i) {
          out.string += seq.string;
          out.items.insert(out.items.end(), seq.items.begin(), seq.items.end());
        }
        return out;
      }
    }
    fail(line, fmt::format("'{}' between {} and {}", o, kind_name(a.kind), kind_name(b.kind)));
  }

  PyValue arithmetic(int line, const std::string& o, const PyValue& a, const PyValue& b) {
    if (a.kind == PyValue::Kind::integer && b.kind == PyValue::Kind::integer && o != "/") {
      const std::int64_t x = a.integer, y = b.integer;
      std::int64_t r = 0;
      bool overflow = false;
      if (o == "+") overflow = __builtin_add_overflow(x, y, &r);
      else if (o == "-") overflow = __builtin_sub_overflow(x, y, &r);
      else if (o == "*") overflow = __builtin_mul_overflow(x, y, &r);
      else if (o == "**") {
        if (y < 0) return arithmetic(line, o, make_floating(static_cast<double>(x)), b);
        overflow = !integer_power(x, y, r);
      } else {  // // and %: Python floors, so the remainder takes the divisor's sign
        if (y == 0) fail(line, fmt::format("integer division or modulo by zero ('{}')", o));
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow = true;
        else {
          std::int64_t q = x / y, m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            --q;
            m += y;
          }
          r = o == "//" ? q : m;
        }
      }
      if (overflow) fail(line, fmt::format("integer '{}' overflows 64 bits", o));
      return make_integer(r);
    }
    const double x = a.as_double(), y = b.as_double();
    if (o == "+") return make_floating(x + y);
    if (o == "-") return make_floating(x - y);
    if (o == "*") return make_floating(x * y);
    if (o == "**") return float_power(line, x, y);
    if (y == 0) fail(line, fmt::format("float division by zero ('{}')", o));
    if (o == "/") return make_floating(x / y);
    const double q = std::floor(x / y);
    return make_floating(o == "//" ? q : x - q * y);
  }

  // x ** y for y >= 0 by repeated squaring (63 rounds at most); false when it overflows 64 bits.
  static bool integer_power(std::int64_t x, std::int64_t y, std::int64_t& r) {
    r = 1;
    std::int64_t base = x;
    while (y > 0) {
      if ((y & 1) != 0 && __builtin_mul_overflow(r, base, &r)) return false;
      y >>= 1;
      if (y > 0 && __builtin_mul_overflow(base, base, &base)) return false;
    }
    return true;
  }

  // Python's float power: what it refuses (ZeroDivisionError, OverflowError, a complex
  // result) is refused here too.
  PyValue float_power(int line, double x, double y) const {
    if (x == 0.0 && y < 0.0) fail(line, "0 cannot be raised to a negative power");
    const double r = std::pow(x, y);
    if (std::isnan(r) && !std::isnan(x) && !std::isnan(y))
      fail(line, fmt::format("a negative number to a fractional power ({} ** {}) is a complex "
                             "number, not a config value",
                             x, y));
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
      fail(line, fmt::format("'**' overflows a float ({} ** {})", x, y));
    return make_floating(r);
  }

  // `size` as value_size counts it; the largest int64 stands for any size beyond it.
  void check_size(std::int64_t size, int line) const {
    if (size <= kMaxValueSize) return;
    fail(line, fmt::format("the value would hold {}{} items and characters; a config value "
                           "holds at most {}",
                           size == std::numeric_limits<std::int64_t>::max() ? "more than " : "",
                           size, kMaxValueSize));
  }

  // A sequence just built (from brackets, or an earlier key inside them) within the bounds.
  void check_built(const PyValue& value, int line) const {
    if (value_depth(value) > kMaxNesting) fail_nesting(line);
    check_size(value_size(value), line);
  }

  [[noreturn]] void fail_nesting(int line) const {
    fail(line, fmt::format("the value nests more than {} levels deep (parentheses, brackets, "
                           "signs or powers); a config value does not",
                           kMaxNesting));
  }

  // One level of nesting while it is parsed: refused beyond kMaxNesting, before the parser's
  // recursion can exhaust the stack.
  class Nested {
   public:
    Nested(Reader& reader, int line) : reader_(reader) {
      if (reader_.depth_ == kMaxNesting) reader_.fail_nesting(line);
      ++reader_.depth_;
    }
    ~Nested() { --reader_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Reader& reader_;
  };

  std::vector<Token> tokens_;
  const std::string& origin_;
  std::size_t at_ = 0;
  int depth_ = 0;               // nesting of the expression being parsed
  std::int64_t file_size_ = 0;  // value_size of every assignment so far
  std::vector<std::string> factories_;  // the names easydict's EasyDict was imported as
  std::string config_name_;             // the object `NAME = edict()` made
  std::map<std::string, PyValue> values_;
  std::vector<PythonAssignment> assignments_;
};

// The text as Python reads a source file: a UTF-8 byte-order mark at its start is not part of
// it, and CR LF or a lone CR end a line as LF does (universal newlines), strings included.
std::string python_source_text(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out += text[i];
      continue;
    }
    out += '\n';
    if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
  }
  return out;
}

}  // namespace

std::string python_repr(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::boolean: return v.boolean ? "True" : "False";
    case PyValue::Kind::integer: return fmt::format("{}", v.integer);
    case PyValue::Kind::floating: {
      const std::string s = fmt::format("{}", v.floating);
      return s.find_first_of(".eEn") == std::string::npos ? s + ".0" : s;
    }
    case PyValue::Kind::string: return fmt::format("'{}'", v.string);
    case PyValue::Kind::list:
    case PyValue::Kind::tuple: {
      std::vector<std::string> items;
      for (const PyValue& item : v.items) items.push_back(python_repr(item));
      if (v.kind == PyValue::Kind::list) return fmt::format("[{}]", fmt::join(items, ", "));
      return fmt::format("({}{})", fmt::join(items, ", "), items.size() == 1 ? "," : "");
    }
  }
  return "?";
}

std::vector<PythonAssignment> read_python_assignments(std::string_view text,
                                                      const std::string& origin) {
  const std::string source = python_source_text(text);
  Reader reader(Lexer(source, origin).tokens(), origin);
  return reader.statements();
}

}  // namespace pfc
