// Module 01 — checking a gradient by nudging the input.
//
// backward() computes a derivative exactly, from the rules of each operation; a finite difference
// estimates it from two forward passes alone, with no rules at all. When the two agree, the rules
// are right. The central difference
//   f'(x) ≈ (f(x + h) − f(x − h)) / 2h
// has an error of order h² (the one-sided (f(x + h) − f(x)) / h has order h), so h = 1e-5 gives
// about ten correct digits for smooth functions in double precision.
//
// Example: numerical_grad([](const Value& x) { return x.pow(2); }, Value(3.0)) ≈ 6.0.
#pragma once

#include <functional>

#include "g2c/autodiff/value.h"

namespace g2c::autodiff {

/// A function of one Value, as numerical_grad takes it.
using ScalarFunction = std::function<Value(const Value&)>;

/// Refuses a step h that is not a positive finite number (h = 0 would divide 0 by 0).
void check_step(double h);

/// The central difference (f(x + h) − f(x − h)) / 2h at x's data, on fresh leaves: x itself and
/// its grad are left untouched. ValueError for h <= 0. Your work (g2c/autodiff/grad_check.cpp).
double numerical_grad(const ScalarFunction& f, const Value& x, double h = 1e-5);

}  // namespace g2c::autodiff
