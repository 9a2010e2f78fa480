// Module 03 — your work: three activation functions.
#include "g2c/nn/activations.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor ReLUImpl::forward(const torch::Tensor& x) {
  // TODO: keep positive entries, zero the rest (torch::clamp_min or torch::relu).
  throw g2c::todo("ReLU::forward", "g2c/nn/activations.cpp", "03");
}

torch::Tensor TanhImpl::forward(const torch::Tensor& x) {
  // TODO: return tanh(x).
  throw g2c::todo("Tanh::forward", "g2c/nn/activations.cpp", "03");
}

torch::Tensor SigmoidImpl::forward(const torch::Tensor& x) {
  // TODO: return 1 / (1 + exp(-x)) (torch::sigmoid is the stable way).
  throw g2c::todo("Sigmoid::forward", "g2c/nn/activations.cpp", "03");
}

}  // namespace g2c::nn
