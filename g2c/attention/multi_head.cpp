// Module 08 — your work: multi-head attention.
#include "g2c/attention/multi_head.h"

#include <cmath>   // std::sqrt
#include <limits>  // std::numeric_limits

#include "g2c/core/errors.h"

namespace g2c::attention {

torch::Tensor MultiHeadAttentionImpl::attention_weights(const torch::Tensor& x) {
  // TODO: one attention pattern per head, (B, T, D) -> (B, H, T, T).
  //   check_input(x);  B = x.size(0), T = x.size(1).
  //   Split the heads: Q = q_proj(x).view({B, T, num_heads, head_dim}).transpose(1, 2), and K
  //     the same from k_proj(x), each (B, H, T, d).
  //   scores = Q Kᵀ / √d: torch::matmul(Q, K.transpose(-2, -1)) / std::sqrt(double(head_dim))
  //     — √head_dim, not √D (B, H, T, T).
  //   If causal, block the future before the softmax; the (T, T) mask broadcasts over B and H:
  //     scores = scores.masked_fill(causal_mask(T, x.device()),
  //                                 -std::numeric_limits<float>::infinity());
  //   Return torch::softmax(scores, /*dim=*/-1).
  throw g2c::todo("MultiHeadAttention::attention_weights", "g2c/attention/multi_head.cpp", "08");
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: mix the values head by head, then merge the heads, (B, T, D) -> (B, T, D).
  //   weights = attention_weights(x) (B, H, T, T);
  //   V = v_proj(x).view({B, T, num_heads, head_dim}).transpose(1, 2) (B, H, T, d);
  //   mixed = torch::matmul(weights, V) (B, H, T, d);
  //   merge: mixed.transpose(1, 2).contiguous().view({B, T, embedding_dim}) (B, T, D);
  //   return out_proj(merged).
  throw g2c::todo("MultiHeadAttention::forward", "g2c/attention/multi_head.cpp", "08");
}

}  // namespace g2c::attention
