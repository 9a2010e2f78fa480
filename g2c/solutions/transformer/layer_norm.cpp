// Module 09 — reference solution for g2c/transformer/layer_norm.cpp.
#include "g2c/transformer/layer_norm.h"

namespace g2c::transformer {

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto mean = x.mean(/*dim=*/-1, /*keepdim=*/true);  // (…, 1)
  // The population variance (divide by D): the layer standardizes this one vector, it does not
  // estimate the variance of a larger population from a sample.
  const auto var = x.var(/*dim=*/-1, /*unbiased=*/false, /*keepdim=*/true);  // (…, 1)
  const auto x_hat = (x - mean) / torch::sqrt(var + eps);  // (…, D): eps inside the root
  return gamma * x_hat + beta;                             // (…, D), per-channel scale and shift
}

}  // namespace g2c::transformer
