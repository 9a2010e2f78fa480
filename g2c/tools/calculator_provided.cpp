// Module 18 — the provided half of calculator.h: Python's numbers and arithmetic, and the tokens.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/utf8.h"
#include "g2c/tools/calculator.h"

namespace g2c::tools {

using g2c::tokenizer::python_repr;

// ---------------------------------------------------------------------------------------------
// Number

std::int64_t Number::as_integer() const {
  if (!is_integer()) throw ValueError("Number::as_integer: " + str() + " is a float");
  return std::get<std::int64_t>(value_);
}

double Number::as_double() const {
  return is_integer() ? static_cast<double>(std::get<std::int64_t>(value_))
                      : std::get<double>(value_);
}

std::string Number::str() const {
  if (is_integer()) return std::to_string(std::get<std::int64_t>(value_));
  const double value = std::get<double>(value_);
  // fmt's shortest form switches to an exponent where Python's repr does (below 1e-4, from 1e16
  // on) but writes an integral float without its ".0".
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e16) {
    return fmt::format("{:.1f}", value);
  }
  return fmt::format("{}", value);
}

bool operator==(const Number& a, const Number& b) {
  if (a.is_integer() && b.is_integer()) return a.as_integer() == b.as_integer();
  return a.as_double() == b.as_double();
}

std::ostream& operator<<(std::ostream& stream, const Number& number) {
  return stream << number.str();
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

namespace {

[[noreturn]] void integer_overflow(std::string_view op, std::int64_t a, std::int64_t b) {
  throw ToolError(fmt::format(
      "the result of {} {} {} is beyond the calculator's 64-bit integers (about ±9.2e18); "
      "write one of the numbers as a float (e.g. {}.0) for an approximate result",
      a, op, b, a));
}

Number checked_float(std::string_view op, double a, double b, double result) {
  if (std::isinf(result) && std::isfinite(a) && std::isfinite(b)) {
    throw ToolError(fmt::format("the result of {} {} {} is too large for a float", Number(a).str(),
                                op, Number(b).str()));
  }
  return result;
}

Number integer_power(std::int64_t base, std::int64_t exponent) {
  if (exponent < 0) {
    if (base == 0) throw ZeroDivisionError("0.0 cannot be raised to a negative power");
    return std::pow(static_cast<double>(base), static_cast<double>(exponent));
  }
  if (base == 0 || base == 1) return exponent == 0 ? 1 : base;
  if (base == -1) return exponent % 2 == 0 ? 1 : -1;
  // |base| >= 2: any exponent above 63 overflows, so it is refused before any multiplication.
  if (exponent > 63) integer_overflow("**", base, exponent);
  std::int64_t result = 1;
  for (std::int64_t i = 0; i < exponent; ++i) {
    if (__builtin_mul_overflow(result, base, &result)) integer_overflow("**", base, exponent);
  }
  return result;
}

Number float_power(double base, double exponent) {
  if (base == 0.0 && exponent < 0.0) {
    throw ZeroDivisionError("0.0 cannot be raised to a negative power");
  }
  if (base < 0.0 && std::isfinite(exponent) && exponent != std::floor(exponent)) {
    throw ToolError(
        fmt::format("{} ** {} is a complex number; the calculator works with real "
                    "numbers only",
                    Number(base).str(), Number(exponent).str()));
  }
  return checked_float("**", base, exponent, std::pow(base, exponent));
}

/// Python's float // and % (Objects/floatobject.c's float_divmod): the remainder takes the
/// divisor's sign and the quotient is rounded toward minus infinity.
std::pair<double, double> float_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floor_div;
  if (div != 0.0) {
    floor_div = std::floor(div);
    if (div - floor_div > 0.5) floor_div += 1.0;
  } else {
    floor_div = std::copysign(0.0, a / b);
  }
  return {floor_div, mod};
}

int bit_length(unsigned __int128 x) {
  int bits = 0;
  for (; x != 0; x >>= 1) ++bits;
  return bits;
}

/// a / b correctly rounded to a double, as Python divides two ints. Converting each to a double
/// first would round twice once either is beyond 2**53 (205843259 * 371554667 / 25).
double true_divide(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (a > -kExact && a < kExact && b > -kExact && b < kExact) {
    return static_cast<double>(a) / static_cast<double>(b);  // both exact: one rounding
  }
  const auto magnitude = [](std::int64_t x) {
    return x < 0 ? static_cast<unsigned __int128>(-(x + 1)) + 1 : static_cast<unsigned __int128>(x);
  };
  const bool negative = (a < 0) != (b < 0);
  auto numerator = magnitude(a);
  auto denominator = magnitude(b);
  if (numerator == 0) return negative ? -0.0 : 0.0;
  // Scale so that the quotient has 55 or 56 bits: 53 to keep, and the rest to round with.
  const int shift = 55 - (bit_length(numerator) - bit_length(denominator));
  if (shift >= 0) {
    numerator <<= shift;
  } else {
    denominator <<= -shift;
  }
  const unsigned __int128 quotient = numerator / denominator;
  const bool inexact = numerator % denominator != 0;
  const int extra = bit_length(quotient) - 53;
  unsigned __int128 kept = quotient >> extra;
  const unsigned __int128 dropped = quotient & ((static_cast<unsigned __int128>(1) << extra) - 1);
  const unsigned __int128 half = static_cast<unsigned __int128>(1) << (extra - 1);
  if (dropped > half || (dropped == half && (inexact || (kept & 1) != 0))) ++kept;  // half to even
  const double magnitude_value = std::ldexp(static_cast<double>(kept), extra - shift);
  return negative ? -magnitude_value : magnitude_value;
}

Number integer_binary(std::string_view op, std::int64_t a, std::int64_t b) {
  std::int64_t result = 0;
  if (op == "+") {
    if (__builtin_add_overflow(a, b, &result)) integer_overflow(op, a, b);
    return result;
  }
  if (op == "-") {
    if (__builtin_sub_overflow(a, b, &result)) integer_overflow(op, a, b);
    return result;
  }
  if (op == "*") {
    if (__builtin_mul_overflow(a, b, &result)) integer_overflow(op, a, b);
    return result;
  }
  if (op == "/") {
    if (b == 0) throw ZeroDivisionError("division by zero");
    return true_divide(a, b);
  }
  if (op == "//" || op == "%") {
    if (b == 0) throw ZeroDivisionError("integer division or modulo by zero");
    if (b == -1) {  // a / -1 overflows for the smallest integer; the remainder is always 0
      if (op == "%") return 0;
      if (__builtin_sub_overflow(std::int64_t{0}, a, &result)) integer_overflow(op, a, b);
      return result;
    }
    std::int64_t quotient = a / b;
    std::int64_t remainder = a % b;
    if (remainder != 0 && ((remainder < 0) != (b < 0))) {
      quotient -= 1;
      remainder += b;
    }
    return op == "//" ? quotient : remainder;
  }
  if (op == "**") return integer_power(a, b);
  throw ValueError(fmt::format("apply_binary: unknown operator {}", python_repr(op)));
}

Number float_binary(std::string_view op, double a, double b) {
  if (op == "+") return checked_float(op, a, b, a + b);
  if (op == "-") return checked_float(op, a, b, a - b);
  if (op == "*") return checked_float(op, a, b, a * b);
  if (op == "/") {
    if (b == 0.0) throw ZeroDivisionError("float division by zero");
    return checked_float(op, a, b, a / b);
  }
  if (op == "//" || op == "%") {
    if (b == 0.0)
      throw ZeroDivisionError(op == "//" ? "float floor division by zero" : "float modulo by zero");
    const auto [quotient, remainder] = float_divmod(a, b);
    return op == "//" ? quotient : remainder;
  }
  if (op == "**") return float_power(a, b);
  throw ValueError(fmt::format("apply_binary: unknown operator {}", python_repr(op)));
}

}  // namespace

Number apply_binary(std::string_view op, const Number& left, const Number& right) {
  if (left.is_integer() && right.is_integer()) {
    return integer_binary(op, left.as_integer(), right.as_integer());
  }
  return float_binary(op, left.as_double(), right.as_double());
}

Number apply_unary(std::string_view op, const Number& operand) {
  if (op == "+") return operand;
  if (op != "-") throw ValueError(fmt::format("apply_unary: unknown operator {}", python_repr(op)));
  if (!operand.is_integer()) return -operand.as_double();
  if (operand.as_integer() == std::numeric_limits<std::int64_t>::min()) {
    throw ToolError("-(" + operand.str() + ") is beyond the calculator's 64-bit integers");
  }
  return -operand.as_integer();
}

// ---------------------------------------------------------------------------------------------
// Tokens

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;  // Python allows non-ASCII letters in names
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

[[noreturn]] void bad_number(std::string_view expression, std::string_view literal,
                             std::size_t position, std::string_view why) {
  throw ToolError(fmt::format("could not parse {}: the number {} at character {} {}",
                              python_repr(expression), python_repr(literal), position, why));
}

/// Digits with single underscores between them (Python's 1_000), from `i`; returns the end.
std::size_t scan_digits(std::string_view text, std::size_t i, std::string& digits, bool& valid) {
  while (i < text.size() && (is_digit(text[i]) || text[i] == '_')) {
    if (text[i] == '_') {
      if (i + 1 >= text.size() || !is_digit(text[i + 1]) || digits.empty() ||
          !is_digit(text[i - 1])) {
        valid = false;
      }
    } else {
      digits.push_back(text[i]);
    }
    ++i;
  }
  return i;
}

/// The number literal starting at `start` (a digit, or '.' followed by a digit).
CalcToken scan_number(std::string_view expression, std::size_t start) {
  std::string digits;  // the literal without underscores, as strtod reads it
  bool valid = true;
  std::size_t i = scan_digits(expression, start, digits, valid);
  const std::size_t integer_digits = digits.size();
  bool is_float = false;
  if (i < expression.size() && expression[i] == '.') {
    is_float = true;
    digits.push_back('.');
    std::string fraction;
    i = scan_digits(expression, i + 1, fraction, valid);
    digits += fraction;
  }
  if (i < expression.size() && (expression[i] == 'e' || expression[i] == 'E')) {
    std::size_t j = i + 1;
    std::string exponent = "e";
    if (j < expression.size() && (expression[j] == '+' || expression[j] == '-')) {
      exponent.push_back(expression[j++]);
    }
    std::string exponent_digits;
    const std::size_t end = scan_digits(expression, j, exponent_digits, valid);
    if (exponent_digits.empty()) {
      bad_number(expression, expression.substr(start, end - start), start,
                 "has an exponent without digits");
    }
    is_float = true;
    digits += exponent + exponent_digits;
    i = end;
  }
  const std::string literal(expression.substr(start, i - start));
  if (!valid) bad_number(expression, literal, start, "has a misplaced underscore");
  CalcToken token{CalcTokenKind::Number, literal, start};
  if (is_float) {
    token.value = std::strtod(digits.c_str(), nullptr);  // 1e400 is inf, as in Python
    return token;
  }
  if (integer_digits > 1 && digits.find_first_not_of('0') != std::string::npos &&
      digits[0] == '0') {
    bad_number(expression, literal, start,
               "has leading zeros, which Python does not allow in an integer");
  }
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) {
    bad_number(expression, literal, start,
               "is beyond the calculator's 64-bit integers (write it as a float, e.g. 1e20)");
  }
  token.value = value;
  return token;
}

/// A quoted string from `start` to its closing quote (or the end of the expression).
CalcToken scan_string(std::string_view expression, std::size_t start) {
  const char quote = expression[start];
  std::size_t i = start + 1;
  while (i < expression.size() && expression[i] != quote) i += expression[i] == '\\' ? 2 : 1;
  i = std::min(i + 1, expression.size());
  return {CalcTokenKind::String, std::string(expression.substr(start, i - start)), start};
}

}  // namespace

CalcTokens::CalcTokens(std::string_view expression) : expression_(expression) {
  if (expression.size() > kMaxLength) {
    throw ToolError(
        fmt::format("the expression is {} characters long; the calculator takes at "
                    "most {}",
                    expression.size(), kMaxLength));
  }
  std::size_t depth = 0;
  std::size_t i = 0;
  while (i < expression.size()) {
    const char c = expression[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (is_digit(c) ||
               (c == '.' && i + 1 < expression.size() && is_digit(expression[i + 1]))) {
      tokens_.push_back(scan_number(expression, i));
      i += tokens_.back().text.size();
    } else if (is_name_start(c)) {
      std::size_t end = i;
      while (end < expression.size() && is_name_char(expression[end])) ++end;
      tokens_.push_back({CalcTokenKind::Name, std::string(expression.substr(i, end - i)), i});
      i = end;
    } else if (c == '\'' || c == '"') {
      tokens_.push_back(scan_string(expression, i));
      i += tokens_.back().text.size();
    } else if ((c == '*' || c == '/') && i + 1 < expression.size() && expression[i + 1] == c) {
      tokens_.push_back({CalcTokenKind::Operator, std::string(2, c), i});  // ** or //
      i += 2;
    } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '(' || c == ')') {
      if (c == '(' && ++depth > kMaxDepth) {
        throw ToolError(
            fmt::format("the expression nests parentheses more than {} deep", kMaxDepth));
      }
      if (c == ')' && depth > 0) --depth;
      tokens_.push_back({CalcTokenKind::Operator, std::string(1, c), i});
      ++i;
    } else {
      // One symbol the grammar has no place for ('@', '~', '<', '[', '.', ':', …), or the first
      // byte of one outside ASCII kept whole so the message shows it.
      const std::size_t length =
          std::max<std::size_t>(1, g2c::tokenizer::utf8_prefix(expression.substr(i), 1).size());
      tokens_.push_back({CalcTokenKind::Other, std::string(expression.substr(i, length)), i});
      i += length;
    }
  }
  tokens_.push_back({CalcTokenKind::End, "", expression.size()});
}

CalcToken CalcTokens::next() {
  CalcToken token = tokens_[position_];
  if (position_ + 1 < tokens_.size()) ++position_;
  return token;
}

bool CalcTokens::accept(std::string_view symbol) {
  const auto& token = peek();
  if (token.kind != CalcTokenKind::Operator || token.text != symbol) return false;
  next();
  return true;
}

void CalcTokens::reject() const {
  const auto& token = peek();
  const std::string where = fmt::format("(at character {})", token.position);
  constexpr std::string_view kAllowed =
      "a calculator expression has only numbers, + - * / // % **, and parentheses";
  switch (token.kind) {
    case CalcTokenKind::End:
      throw ToolError(
          fmt::format("could not parse {}: it ends where a number or '(' was "
                      "expected",
                      python_repr(expression_)));
    case CalcTokenKind::Name:
      throw ToolError(
          fmt::format("not allowed in a calculator expression: the {} {} {}; {}",
                      token.text == "True" || token.text == "False" ? "boolean" : "name",
                      python_repr(token.text), where, kAllowed));
    case CalcTokenKind::String:
      throw ToolError(fmt::format("not allowed in a calculator expression: the string {} {}; {}",
                                  token.text, where, kAllowed));
    case CalcTokenKind::Other:
      throw ToolError(fmt::format("not allowed in a calculator expression: the symbol {} {}; {}",
                                  python_repr(token.text), where, kAllowed));
    case CalcTokenKind::Number:
    case CalcTokenKind::Operator:
      break;
  }
  throw ToolError(fmt::format("could not parse {}: unexpected {} {}", python_repr(expression_),
                              python_repr(token.text), where));
}

}  // namespace g2c::tools
