// Module 03 — reference solution for g2c/nn/activations.cpp.
#include "g2c/nn/activations.h"

namespace g2c::nn {

torch::Tensor ReLUImpl::forward(const torch::Tensor& x) {
  return torch::clamp_min(x, 0);
}

torch::Tensor TanhImpl::forward(const torch::Tensor& x) {
  return torch::tanh(x);
}

// torch::sigmoid avoids exp overflow for large negative x.
torch::Tensor SigmoidImpl::forward(const torch::Tensor& x) {
  return torch::sigmoid(x);
}

}  // namespace g2c::nn
