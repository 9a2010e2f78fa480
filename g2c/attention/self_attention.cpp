// Module 07 — your work: single-head self-attention.
#include "g2c/attention/self_attention.h"

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor SelfAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: check_input(x); Q = q_proj(x), K = k_proj(x); scores = Q Kᵀ / √D (B, T, T); if causal,
  // fill the blocked positions of causal_mask(T) with -inf; softmax over the last dim.
  throw g2c::todo("SelfAttention::attention_weights", "g2c/attention/self_attention.cpp", "07");
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: weights = attention_weights(x) (the same code path as the heatmaps), then
  // out_proj(weights @ v_proj(x)), shape (B, T, D).
  throw g2c::todo("SelfAttention::forward", "g2c/attention/self_attention.cpp", "07");
}

}  // namespace g2c::attention
