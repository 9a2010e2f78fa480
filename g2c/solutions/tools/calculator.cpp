// Module 18, reference: the calculator's grammar as a recursive-descent parser, one function per
// rule, computing as it reads (calculator.h has the grammar).
#include "g2c/tools/calculator.h"

namespace g2c::tools {

namespace {

Number sum(CalcTokens& tokens);

// atom := NUMBER | "(" sum ")"
Number atom(CalcTokens& tokens) {
  if (tokens.peek().kind == CalcTokenKind::Number) return tokens.next().value;
  if (tokens.accept("(")) {
    const Number inside = sum(tokens);
    if (!tokens.accept(")")) tokens.reject();
    return inside;
  }
  tokens.reject();
}

Number unary(CalcTokens& tokens);

// power := atom ("**" unary)?   — the exponent is a unary, which may hold another power: right
// to left, and 2 ** -1 is allowed.
Number power(CalcTokens& tokens) {
  const Number base = atom(tokens);
  if (tokens.accept("**")) return apply_binary("**", base, unary(tokens));
  return base;
}

// unary := ("+" | "-") unary | power   — below power: -2 ** 2 is -(2 ** 2).
Number unary(CalcTokens& tokens) {
  if (tokens.accept("-")) return apply_unary("-", unary(tokens));
  if (tokens.accept("+")) return apply_unary("+", unary(tokens));
  return power(tokens);
}

// product := unary (("*" | "/" | "//" | "%") unary)*   — left to right.
Number product(CalcTokens& tokens) {
  Number value = unary(tokens);
  while (true) {
    bool matched = false;
    for (const char* op : {"*", "/", "//", "%"}) {
      if (tokens.accept(op)) {
        value = apply_binary(op, value, unary(tokens));
        matched = true;
        break;
      }
    }
    if (!matched) return value;
  }
}

// sum := product (("+" | "-") product)*   — left to right.
Number sum(CalcTokens& tokens) {
  Number value = product(tokens);
  while (true) {
    if (tokens.accept("+")) {
      value = apply_binary("+", value, product(tokens));
    } else if (tokens.accept("-")) {
      value = apply_binary("-", value, product(tokens));
    } else {
      return value;
    }
  }
}

}  // namespace

Number calculator_evaluate(std::string_view expression) {
  CalcTokens tokens(expression);
  const Number value = sum(tokens);
  if (tokens.peek().kind != CalcTokenKind::End) tokens.reject();  // "1 2", "(1).real", "1 < 2"
  return value;
}

}  // namespace g2c::tools
