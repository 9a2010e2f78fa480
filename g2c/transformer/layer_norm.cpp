// Module 09 — your work: layer normalization.
#include "g2c/transformer/layer_norm.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  // TODO: check_input(x); mean = x.mean(/*dim=*/-1, /*keepdim=*/true) (…, 1);
  // var = x.var(/*dim=*/-1, /*unbiased=*/false, /*keepdim=*/true) — the population variance;
  // x_hat = (x - mean) / torch::sqrt(var + eps); return gamma * x_hat + beta (…, D).
  throw g2c::todo("LayerNorm::forward", "g2c/transformer/layer_norm.cpp", "09");
}

}  // namespace g2c::transformer
