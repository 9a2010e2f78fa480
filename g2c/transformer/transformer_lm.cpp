// Module 09 — your work: the TransformerLM forward pass.
#include "g2c/transformer/transformer_lm.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor TransformerLMImpl::forward(const torch::Tensor& ids) {
  // TODO: check_input(ids); const auto T = ids.size(1); refuse T > max_seq_len with
  // g2c::embeddings::check_seq_len(T, max_seq_len) (a ValueError). Then
  // auto x = token_embed(ids) + pos_embed(T); — (B, T, D) + (T, D) broadcasts over the batch;
  // for (auto& block : blocks) x = block(x); x = ln_final(x);
  // return torch::matmul(x, token_embed->weight.t()) + head_bias; — the tied head, (B, T, V):
  // the token table itself, transposed, never a copy of it and never a new Linear.
  throw g2c::todo("TransformerLM::forward", "g2c/transformer/transformer_lm.cpp", "09");
}

}  // namespace g2c::transformer
