// Module 08 — reference solution for g2c/attention/multi_head.cpp.
#include "g2c/attention/multi_head.h"

#include <cmath>
#include <limits>

namespace g2c::attention {

namespace {

/// (B, T, D) -> (B, H, T, d): each head gets its own d-wide slice of the features.
torch::Tensor split_heads(const torch::Tensor& t, std::int64_t num_heads, std::int64_t head_dim) {
  return t.view({t.size(0), t.size(1), num_heads, head_dim}).transpose(1, 2);
}

}  // namespace

torch::Tensor MultiHeadAttentionImpl::attention_weights(const torch::Tensor& x) {
  check_input(x);
  const auto q = split_heads(q_proj(x), num_heads, head_dim);  // (B, H, T, d)
  const auto k = split_heads(k_proj(x), num_heads, head_dim);  // (B, H, T, d)
  auto scores = torch::matmul(q, k.transpose(-2, -1)) /        // (B, H, T, d) @ (B, H, d, T)
                std::sqrt(static_cast<double>(head_dim));      // -> (B, H, T, T)
  if (causal) {
    // (T, T) broadcasts over B and H.
    scores = scores.masked_fill(causal_mask(x.size(1), x.device()),
                                -std::numeric_limits<double>::infinity());
  }
  return torch::softmax(scores, /*dim=*/-1);  // (B, H, T, T)
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& x) {
  const auto weights = attention_weights(x);                   // (B, H, T, T)
  const auto v = split_heads(v_proj(x), num_heads, head_dim);  // (B, H, T, d)
  const auto mixed = torch::matmul(weights, v);  // (B, H, T, T) @ (B, H, T, d) -> (B, H, T, d)
  // Merge the heads back side by side: (B, H, T, d) -> (B, T, H, d) -> (B, T, D).
  const auto merged =
      mixed.transpose(1, 2).contiguous().view({x.size(0), x.size(1), embedding_dim});
  return out_proj(merged);  // (B, T, D)
}

}  // namespace g2c::attention
