// Module 09 — reference solution for g2c/transformer/layer_norm.cpp.
#include "g2c/transformer/layer_norm.h"

namespace g2c::transformer {

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto mean = x.mean(/*dim=*/-1, /*keepdim=*/true);                    // (…, 1)
  const auto var = x.var(/*dim=*/-1, /*unbiased=*/false, /*keepdim=*/true);  // (…, 1), ÷ D
  const auto x_hat = (x - mean) / torch::sqrt(var + eps);                    // (…, D)
  return gamma * x_hat + beta;  // (D) broadcasts over the leading dims
}

}  // namespace g2c::transformer
