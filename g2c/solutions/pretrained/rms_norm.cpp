// Module 16 — reference solution for g2c/pretrained/rms_norm.cpp.
#include "g2c/pretrained/rms_norm.h"

namespace g2c::pretrained {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const auto mean_square = x.pow(2).mean(/*dim=*/-1, /*keepdim=*/true);  // (…, 1)
  return weight * (x / torch::sqrt(mean_square + eps));                  // (…, D): eps inside
}

}  // namespace g2c::pretrained
