// Module 03 — your work: Sequential's forward pass.
#include "g2c/nn/sequential.h"
#include "g2c/core/errors.h"

namespace g2c::nn {

torch::Tensor SequentialImpl::forward(const torch::Tensor& x) {
  // TODO: feed x through each layer of `layers` in order and return the last output.
  throw g2c::todo("Sequential::forward", "g2c/nn/sequential.cpp", "03");
}

}  // namespace g2c::nn
