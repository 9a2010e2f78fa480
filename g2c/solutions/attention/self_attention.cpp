// Module 07 — reference solution for g2c/attention/self_attention.cpp.
#include "g2c/attention/self_attention.h"

#include <cmath>
#include <limits>

namespace g2c::attention {

torch::Tensor SelfAttentionImpl::attention_weights(const torch::Tensor& x) {
  check_input(x);
  const auto q = q_proj(x);                             // (B, T, D)
  const auto k = k_proj(x);                             // (B, T, D)
  auto scores = torch::matmul(q, k.transpose(-2, -1));  // (B, T, D) @ (B, D, T) -> (B, T, T)
  scores = scores /
           std::sqrt(static_cast<double>(embedding_dim));  // keeps the softmax out of saturation
  if (causal) {
    const auto blocked = causal_mask(x.size(1), x.device());  // (T, T), broadcast over B
    scores = scores.masked_fill(blocked, -std::numeric_limits<double>::infinity());
  }
  return torch::softmax(scores, /*dim=*/-1);  // (B, T, T), each row sums to 1 over the keys
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
  const auto weights = attention_weights(x);             // (B, T, T)
  const auto mixed = torch::matmul(weights, v_proj(x));  // (B, T, T) @ (B, T, D) -> (B, T, D)
  return out_proj(mixed);                                // (B, T, D)
}

}  // namespace g2c::attention
