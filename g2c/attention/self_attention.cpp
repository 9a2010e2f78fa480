// Module 07 — your work: single-head self-attention.
#include "g2c/attention/self_attention.h"

#include <cmath>   // std::sqrt
#include <limits>  // std::numeric_limits

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor SelfAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: Where each position looks, (B, T, D) -> (B, T, T): queries Q and keys K are projections
  // of x; the score of query i against key j is their dot product scaled by 1/√D (which keeps the
  // softmax out of saturation); when causal, a future key gets -inf *before* the softmax
  // (causal_mask gives the (T, T) pattern); a softmax over the keys makes each row sum to 1. Check
  // x first (check_input). Operations: a batched matmul, a transpose of the last two dimensions,
  // masked_fill, softmax.
  // Hints, one step at a time: scripts/hint.sh 07 SelfAttention::attention_weights
  throw g2c::todo("SelfAttention::attention_weights", "g2c/attention/self_attention.cpp", "07");
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: Every position becomes the average of the values it may see, weighted by
  // attention_weights (the same code path as the heatmaps), then the output projection: (B, T, T) @
  // (B, T, D) -> (B, T, D).
  // Hints, one step at a time: scripts/hint.sh 07 SelfAttention::forward
  throw g2c::todo("SelfAttention::forward", "g2c/attention/self_attention.cpp", "07");
}

}  // namespace g2c::attention
