// Module 09 — reference solution for g2c/transformer/transformer_lm.cpp.
#include "g2c/transformer/transformer_lm.h"

namespace g2c::transformer {

torch::Tensor TransformerLMImpl::forward(const torch::Tensor& ids) {
  check_input(ids);
  const std::int64_t length = ids.size(1);
  g2c::embeddings::check_seq_len(length, max_seq_len);  // the position table has max_seq_len rows
  auto x = token_embed(ids) + pos_embed(length);        // (B, T, D) + (T, D)
  for (auto& block : blocks) x = block(x);              // (B, T, D)
  x = ln_final(x);                                      // (B, T, D)
  // Tied head: the token table, transposed. (B, T, D) @ (D, V) -> (B, T, V)
  return torch::matmul(x, token_embed->weight.t()) + head_bias;
}

}  // namespace g2c::transformer
