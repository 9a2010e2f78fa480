// Module 03 — your work: three activation functions.
#include "g2c/nn/activations.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor ReLUImpl::forward(const torch::Tensor& x) {
  // TODO: ReLU(x) = max(0, x), element by element: negative entries become 0, positive ones pass
  // unchanged. Same shape in and out. Operations: a clamp from below (LibTorch has one).
  // Hints, one step at a time: scripts/hint.sh 03 ReLU::forward
  throw g2c::todo("ReLU::forward", "g2c/nn/activations.cpp", "03");
}

torch::Tensor TanhImpl::forward(const torch::Tensor& x) {
  // TODO: tanh(x), element by element: a smooth squashing into (-1, 1) with tanh(0) = 0. Same shape
  // in and out.
  // Hints, one step at a time: scripts/hint.sh 03 Tanh::forward
  throw g2c::todo("Tanh::forward", "g2c/nn/activations.cpp", "03");
}

torch::Tensor SigmoidImpl::forward(const torch::Tensor& x) {
  // TODO: sigmoid(x) = 1 / (1 + e^(-x)), element by element, into (0, 1). Written naively, e^(-x)
  // overflows for large negative x: use LibTorch's stable element-wise sigmoid.
  // Hints, one step at a time: scripts/hint.sh 03 Sigmoid::forward
  throw g2c::todo("Sigmoid::forward", "g2c/nn/activations.cpp", "03");
}

}  // namespace g2c::nn
