// Module 09 — reference solution for g2c/transformer/block.cpp.
#include "g2c/transformer/block.h"

namespace g2c::transformer {

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto h = x + attn(ln1(x));  // (B, T, D): attention writes into the residual stream
  return h + ffn(ln2(h));           // (B, T, D): then the feed-forward does
}

}  // namespace g2c::transformer
