// Module 18 — the calculator: arithmetic a model cannot do in its head, evaluated safely.
//
// SmolLM2-135M-Instruct answers "What is 13 + 28?" with "13 + 28 = 42". With a calculator tool
// the model only has to write the expression; the tool does the arithmetic. But the expression
// comes from a model, so it is untrusted text, and "evaluate it" must never mean "run it": the
// evaluator accepts a whitelist — numbers, + - * / // % **, parentheses, unary + and - — and
// refuses everything else by construction, because its grammar has no rule for anything else.
//
// The grammar, one function per line, loosest-binding first (Python's precedence):
//
//   sum     := product (("+" | "-") product)*           left to right: 10 - 3 - 2 = 5
//   product := unary (("*" | "/" | "//" | "%") unary)*   left to right: 12 / 3 / 2 = 2.0
//   unary   := ("+" | "-") unary | power                 -2 ** 2 = -(2 ** 2) = -4
//   power   := atom ("**" unary)?                        right to left: 2 ** 3 ** 2 = 2 ** 9
//   atom    := NUMBER | "(" sum ")"
//
// A recursive-descent parser is that grammar written as functions that call each other, each
// reading tokens from a shared CalcTokens and computing as it goes. Anything the grammar has no
// rule for — a name (x, True, abs, __import__), a string, '@', '~', '<', '[', '.', ':=' — reaches
// a point where no rule applies, and CalcTokens::reject() turns it into a ToolError that names it.
//
// Numbers follow Python's rules (Number): integers stay integers under + - * // % and ** with a
// non-negative exponent; / always gives a float; // and % round toward minus infinity (-7 // 2 is
// -4, -7 % 3 is 2); mixing a float in gives a float. Integers are 64-bit here (Python's are
// unbounded): a result beyond ±9.2e18 is refused with a ToolError, as is a power that would be
// (2 ** 1000000000 is refused at once, never computed), never a hang or a wrapped-around number.
// Division by zero throws ZeroDivisionError, not ToolError: the expression was allowed, the
// arithmetic failed (the loop reports both to the model).
//
// Plain C++, no LibTorch. The tokens and the arithmetic are provided; calculator_evaluate, the
// parser, is yours (g2c/tools/calculator.cpp).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "g2c/tools/tool.h"

namespace g2c::tools {

/// Division or modulo by zero, and 0 ** negative: Python's ZeroDivisionError.
class ZeroDivisionError : public std::domain_error {
 public:
  explicit ZeroDivisionError(const std::string& message) : std::domain_error(message) {}
};

/// A Python number: an integer (64-bit) or a float. Compares as Python does (2 == 2.0); str()
/// prints as Python's str() does ("4", "3.5", "6.0", "1e+16").
class Number {
 public:
  template <std::integral Integer>
  requires(!std::same_as<Integer, bool>) Number(Integer value)
      : value_(static_cast<std::int64_t>(value)) {}  // NOLINT: 2 is a Number
  Number(double value) : value_(value) {}            // NOLINT: 0.5 is a Number

  bool is_integer() const { return std::holds_alternative<std::int64_t>(value_); }
  /// The integer; ValueError for a float.
  std::int64_t as_integer() const;
  /// The value as a double (an integer converted).
  double as_double() const;
  /// Python's str(): "4", "-2", "3.5", "6.0", "1e+16", "inf".
  std::string str() const;

  friend bool operator==(const Number& a, const Number& b);

 private:
  std::variant<std::int64_t, double> value_;
};

std::ostream& operator<<(std::ostream& stream, const Number& number);

/// Python's arithmetic on two numbers: op is one of "+", "-", "*", "/", "//", "%", "**".
/// ZeroDivisionError for a zero divisor (/, //, %) and 0 ** negative; ToolError for an integer
/// result beyond 64 bits, a float result that overflows, or a power whose result would be complex
/// ((-8) ** 0.5).
Number apply_binary(std::string_view op, const Number& left, const Number& right);

/// Unary "+" or "-". ToolError for -(-2**63), which has no 64-bit integer.
Number apply_unary(std::string_view op, const Number& operand);

/// What a token is. Operator covers + - * / // % ** and both parentheses; Name, String and Other
/// (any other symbol) exist only to be refused with a message that names them.
enum class CalcTokenKind { Number, Operator, Name, String, Other, End };

struct CalcToken {
  CalcTokenKind kind;
  std::string text;      // as written: "13", "**", "(", "x", "'hi'", "@"; "" for End
  std::size_t position;  // the character it starts at
  Number value = 0;      // for a Number token
};

/// An expression's tokens with a read position: what the parser walks, from the first token to
/// End. Made from the expression; ToolError there for an expression longer than kMaxLength
/// characters, parentheses nested deeper than kMaxDepth (the parser recurses once per level), or
/// a malformed number ("1e", "1__0", "007", an integer beyond 64 bits).
class CalcTokens {
 public:
  static constexpr std::size_t kMaxLength = 4096;
  static constexpr std::size_t kMaxDepth = 100;

  explicit CalcTokens(std::string_view expression);

  /// The next token, not consumed (End once all are read, however often it is asked for).
  const CalcToken& peek() const { return tokens_[position_]; }
  /// Consumes and returns the next token.
  CalcToken next();
  /// Consumes the next token when it is the operator or parenthesis `symbol` and says whether it
  /// did. Example: if (tokens.accept("(")) { ... }.
  bool accept(std::string_view symbol);
  /// Throws the ToolError for the next token where the grammar has no rule for it: "could not
  /// parse '1 +': it ends where a number or '(' was expected", "not allowed in a calculator
  /// expression: the name 'x' (at character 0) ...", "... the symbol '@' ...".
  [[noreturn]] void reject() const;

  std::string_view expression() const { return expression_; }
  /// Every token, End last (for tests and for printing).
  const std::vector<CalcToken>& tokens() const { return tokens_; }

 private:
  std::string expression_;
  std::vector<CalcToken> tokens_;
  std::size_t position_ = 0;
};

/// Your work. The value of an arithmetic expression, evaluated by a recursive-descent parser over
/// CalcTokens following the grammar above; ToolError for anything the grammar refuses (including
/// tokens left over after a complete expression: "1 2"), ZeroDivisionError for a zero divisor.
/// Examples: "1 + 2" -> 3; "(2 + 3) * 4" -> 20; "2 ** 10" -> 1024; "-5 + 3" -> -2; "7 / 2" -> 3.5;
/// "7 // 2" -> 3; "2 ** 3 ** 2" -> 512; "x + 1", "abs(-1)", "True", "'hi'" -> ToolError.
Number calculator_evaluate(std::string_view expression);

}  // namespace g2c::tools
