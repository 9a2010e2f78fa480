// Module 07 — your work: single-head self-attention.
#include "g2c/attention/self_attention.h"

#include <cmath>   // std::sqrt
#include <limits>  // std::numeric_limits

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor SelfAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: where each position looks, (B, T, D) -> (B, T, T).
  //   check_input(x);  then Q = q_proj(x) and K = k_proj(x), each (B, T, D).
  //   scores = Q Kᵀ / √D: torch::matmul(Q, K.transpose(-2, -1)) / std::sqrt(double(embedding_dim))
  //     — row i holds query i against every key j (B, T, T).
  //   If causal, block the future *before* the softmax, with the mask on x's device:
  //     scores = scores.masked_fill(causal_mask(x.size(1), x.device()),
  //                                 -std::numeric_limits<float>::infinity());
  //   Return torch::softmax(scores, /*dim=*/-1): each row sums to 1 over the keys.
  throw g2c::todo("SelfAttention::attention_weights", "g2c/attention/self_attention.cpp", "07");
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: every position becomes a weighted mix of the values it may see, (B, T, D) -> (B, T, D).
  //   weights = attention_weights(x), the same code path as the heatmaps (B, T, T);
  //   return out_proj(torch::matmul(weights, v_proj(x)));  (B, T, T) @ (B, T, D) -> (B, T, D).
  throw g2c::todo("SelfAttention::forward", "g2c/attention/self_attention.cpp", "07");
}

}  // namespace g2c::attention
