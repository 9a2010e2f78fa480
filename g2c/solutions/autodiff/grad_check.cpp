// Module 01 — reference solution for g2c/autodiff/grad_check.cpp.
#include "g2c/autodiff/grad_check.h"

namespace g2c::autodiff {

double numerical_grad(const ScalarFunction& f, const Value& x, double h) {
  check_step(h);
  const double above = f(Value(x.data() + h)).data();
  const double below = f(Value(x.data() - h)).data();
  return (above - below) / (2.0 * h);
}

}  // namespace g2c::autodiff
