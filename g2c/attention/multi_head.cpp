// Module 08 — your work: multi-head attention.
#include "g2c/attention/multi_head.h"

#include <cmath>   // std::sqrt
#include <limits>  // std::numeric_limits

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor MultiHeadAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: H attention patterns at once, (B, T, D) -> (B, H, T, T): split the D features of Q and K
  // into H heads of d = head_dim, so each head is a (T, d) matrix, (B, H, T, d); score with Q Kᵀ
  // scaled by 1/√d (the head's width, not D); mask the future when causal (the (T, T) mask
  // broadcasts over B and H); softmax over the keys. Operations: view, transpose, matmul,
  // masked_fill, softmax.
  // Hints, one step at a time: scripts/hint.sh 08 MultiHeadAttention::attention_weights
  throw g2c::todo("MultiHeadAttention::attention_weights", "g2c/attention/multi_head.cpp", "08");
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: Each head mixes its own slice of the values with its own weights, (B, H, T, d); the heads
  // are then put back side by side into D features and projected: (B, T, D). The merge must undo
  // the split exactly — bring H back next to d before viewing as (B, T, D). Operations: view,
  // transpose, contiguous, matmul.
  // Hints, one step at a time: scripts/hint.sh 08 MultiHeadAttention::forward
  throw g2c::todo("MultiHeadAttention::forward", "g2c/attention/multi_head.cpp", "08");
}

}  // namespace g2c::attention
