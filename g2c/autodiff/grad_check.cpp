// Module 01 — your work: the numerical gradient, the check on backward().
#include "g2c/autodiff/grad_check.h"
#include "g2c/core/errors.h"

namespace g2c::autodiff {

double numerical_grad(const ScalarFunction& f, const Value& x, double h) {
  // TODO: Estimate f'(x) without any gradient rule: evaluate f twice, on two new leaves at x + h
  // and x − h (new Values, so x's graph and grad stay untouched), and return the central
  // difference (f(x + h) − f(x − h)) / 2h of their data. A number, not a Value. Refuse a bad step
  // first (check_step). Hints, one step at a time: scripts/hint.sh 01 numerical_grad
  throw g2c::todo("numerical_grad", "g2c/autodiff/grad_check.cpp", "01");
}

}  // namespace g2c::autodiff
