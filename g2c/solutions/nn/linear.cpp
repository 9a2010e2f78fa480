// Module 03 — reference solution for g2c/nn/linear.cpp.
#include "g2c/nn/linear.h"

namespace g2c::nn {

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  check_input(x);
  return torch::matmul(x, W) + b;  // (..., in) @ (in, out) + (out) -> (..., out)
}

}  // namespace g2c::nn
