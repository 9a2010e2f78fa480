// Module 09 — your work: the pre-norm transformer block.
#include "g2c/transformer/block.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  // TODO: check_input(x); two residual lines, in this order — normalize, run the sublayer, add:
  // auto h = x + attn(ln1(x)); then return h + ffn(ln2(h)); (B, T, D). The residual itself is
  // never normalized, and ln1 and ln2 are two different layers.
  throw g2c::todo("Block::forward", "g2c/transformer/block.cpp", "09");
}

}  // namespace g2c::transformer
