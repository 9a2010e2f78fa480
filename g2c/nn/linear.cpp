// Module 03 — your work: the forward pass of Linear.
#include "g2c/nn/linear.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor LinearImpl::forward(const torch::Tensor& x) {
  // TODO: return x @ W + b. torch::matmul handles any number of leading dimensions, and b
  // broadcasts across them.
  throw g2c::todo("Linear::forward", "g2c/nn/linear.cpp", "03");
}

}  // namespace g2c::nn
