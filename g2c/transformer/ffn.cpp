// Module 09 — your work: the position-wise feed-forward network.
#include "g2c/transformer/ffn.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // TODO: Position by position: widen D -> H with fc1, the exact GELU x · Φ(x) (the erf form, not
  // the tanh approximation), back to D with fc2. (…, D) -> (…, H) -> (…, D). Check x first
  // (check_input).
  // Hints, one step at a time: scripts/hint.sh 09 FeedForward::forward
  throw g2c::todo("FeedForward::forward", "g2c/transformer/ffn.cpp", "09");
}

}  // namespace g2c::transformer
