// Module 09 — your work: the position-wise feed-forward network.
#include "g2c/transformer/ffn.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // TODO: check_input(x); h = fc1(x) (…, H); h = torch::gelu(h) — the exact (erf) GELU, LibTorch's
  // default; return fc2(h) (…, D). Nothing here looks at other positions.
  throw g2c::todo("FeedForward::forward", "g2c/transformer/ffn.cpp", "09");
}

}  // namespace g2c::transformer
