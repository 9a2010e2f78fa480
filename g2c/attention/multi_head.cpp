// Module 08 — your work: multi-head attention.
#include "g2c/attention/multi_head.h"

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor MultiHeadAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: check_input(x); project Q and K, view each as (B, T, H, d) and transpose to (B, H, T, d);
  // scores = Q Kᵀ / √head_dim (B, H, T, T); if causal, mask with causal_mask(T); softmax.
  throw g2c::todo("MultiHeadAttention::attention_weights", "g2c/attention/multi_head.cpp", "08");
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: weights = attention_weights(x); V to (B, H, T, d); weights @ V; transpose back to
  // (B, T, H, d), .contiguous(), view as (B, T, D); out_proj.
  throw g2c::todo("MultiHeadAttention::forward", "g2c/attention/multi_head.cpp", "08");
}

}  // namespace g2c::attention
