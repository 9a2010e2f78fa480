// Module 18 — your work: evaluate an arithmetic expression with a recursive-descent parser.
#include "g2c/tools/calculator.h"
#include "g2c/core/errors.h"

namespace g2c::tools {

Number calculator_evaluate(std::string_view expression) {
  // TODO: tokens = CalcTokens(expression); value = sum(tokens); then, if tokens.peek().kind is
  // not CalcTokenKind::End, tokens.reject() (something is left over: "1 2", "(1).real"); return
  // value. Write one member function per grammar rule (calculator.h) in a local
  // `struct Parser { CalcTokens& tokens; ... };` (its functions may call each other), each
  // returning the Number it read:
  //   sum:     value = product(); while tokens.accept("+") or accept("-"): value =
  //            apply_binary(op, value, product())
  //   product: the same over unary() with "*", "/", "//", "%"
  //   unary:   accept("-") -> apply_unary("-", unary()); accept("+") -> likewise; else power()
  //   power:   base = atom(); accept("**") -> apply_binary("**", base, unary()); else base
  //   atom:    a CalcTokenKind::Number token -> tokens.next().value; accept("(") -> sum(), then
  //            ")" or tokens.reject(); anything else -> tokens.reject()
  // Which rule calls which is the precedence: 1 + 2 * 3 is 7 and -2 ** 2 is -4. The exponent is
  // a unary(), not an atom(), so 2 ** 3 ** 2 is 2 ** 9 and 2 ** -1 is 0.5.
  // Hints, one step at a time: scripts/hint.sh 18 calculator_evaluate
  throw g2c::todo("calculator_evaluate", "g2c/tools/calculator.cpp", "18");
}

}  // namespace g2c::tools
