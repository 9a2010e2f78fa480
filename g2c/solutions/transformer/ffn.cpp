// Module 09 — reference solution for g2c/transformer/ffn.cpp.
#include "g2c/transformer/ffn.h"

namespace g2c::transformer {

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto h = torch::gelu(fc1(x), /*approximate=*/"none");  // (…, H), x · Φ(x) via erf
  return fc2(h);                                               // (…, D)
}

}  // namespace g2c::transformer
