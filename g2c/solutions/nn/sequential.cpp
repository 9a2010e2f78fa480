// Module 03 — reference solution for g2c/nn/sequential.cpp.
#include "g2c/nn/sequential.h"

namespace g2c::nn {

torch::Tensor SequentialImpl::forward(const torch::Tensor& x) {
  torch::Tensor out = x;
  for (const auto& layer : layers) out = layer->forward(out);
  return out;
}

}  // namespace g2c::nn
