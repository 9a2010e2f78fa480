// Tensor helpers for tests.
#pragma once

#include <torch/torch.h>

#include "g2c_test.h"

namespace g2c::testing {

/// Largest absolute element-wise difference, as a double (for messages and tolerances).
inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

/// torch::allclose, but printing the largest difference when it fails.
inline bool close(const torch::Tensor& actual, const torch::Tensor& expected, double atol = 1e-6,
                  double rtol = 0.0) {
  if (actual.sizes() != expected.sizes()) {
    UNSCOPED_INFO("shape " << actual.sizes() << " != " << expected.sizes());
    return false;
  }
  const bool ok = torch::allclose(actual.to(torch::kDouble).cpu(),
                                  expected.to(torch::kDouble).cpu(), rtol, atol);
  if (!ok) UNSCOPED_INFO("max |difference| = " << max_abs_diff(actual.cpu(), expected.cpu()));
  return ok;
}

}  // namespace g2c::testing
