// Module 09 — your work: the pre-norm transformer block.
#include "g2c/transformer/block.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  // TODO: The pre-norm block: two sublayers, each reading a normalized copy of the residual stream
  // and adding its output back — attention with ln1, then the feed-forward network with ln2 reading
  // the stream as the attention left it. The stream itself is never normalized. (B, T, D) -> (B, T,
  // D).
  // Hints, one step at a time: scripts/hint.sh 09 Block::forward
  throw g2c::todo("Block::forward", "g2c/transformer/block.cpp", "09");
}

}  // namespace g2c::transformer
