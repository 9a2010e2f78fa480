// Module 01 — the part of grad_check.h implemented for you: the step's check.
#include <cmath>

#include <fmt/format.h>

#include "g2c/autodiff/grad_check.h"
#include "g2c/core/errors.h"

namespace g2c::autodiff {

void check_step(double h) {
  if (!(h > 0.0) || !std::isfinite(h)) {
    throw g2c::ValueError(fmt::format(
        "numerical_grad: the step h must be a positive finite number (got {}); 1e-5 is the usual "
        "choice for double precision",
        h));
  }
}

}  // namespace g2c::autodiff
