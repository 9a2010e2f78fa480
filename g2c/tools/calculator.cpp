// Module 18 — your work: evaluate an arithmetic expression with a recursive-descent parser.
#include "g2c/tools/calculator.h"
#include "g2c/core/errors.h"

namespace g2c::tools {

Number calculator_evaluate(std::string_view expression) {
  // TODO: The expression's value, computed while it is read by a recursive-descent parser: one
  // function per rule of calculator.h's grammar (sum, product, unary, power, atom), each reading
  // from one shared CalcTokens and returning the Number it read. The rules call each other, so
  // make them member functions of a local struct. Which rule calls which is the precedence:
  // 1 + 2 * 3 is 7 and -2 ** 2 is -4; loops make + - * / // % left to right, and since power's
  // exponent is a unary, 2 ** 3 ** 2 is 2 ** 9 and 2 ** -1 is 0.5. CalcTokens reads (peek, next,
  // accept) and refuses (reject: the ToolError that names the token); apply_binary and
  // apply_unary do Python's arithmetic. Tokens left after the whole sum ("1 2") are refused too.
  // Hints, one step at a time: scripts/hint.sh 18 calculator_evaluate
  throw g2c::todo("calculator_evaluate", "g2c/tools/calculator.cpp", "18");
}

}  // namespace g2c::tools
