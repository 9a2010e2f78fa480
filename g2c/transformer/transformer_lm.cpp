// Module 09 — your work: the TransformerLM forward pass.
#include "g2c/transformer/transformer_lm.h"

#include "g2c/core/errors.h"

namespace g2c::transformer {

torch::Tensor TransformerLMImpl::forward(const torch::Tensor& ids) {
  // TODO: ids (B, T) -> logits (B, T, V): token embeddings plus position embeddings (refuse T >
  // max_seq_len with check_seq_len), every block in order, the final LayerNorm, then the tied head
  // — the token table itself, transposed, plus head_bias: (B, T, D) @ (D, V). Never a copy of the
  // table and never a new Linear. Check the ids first (check_input).
  // Hints, one step at a time: scripts/hint.sh 09 TransformerLM::forward
  throw g2c::todo("TransformerLM::forward", "g2c/transformer/transformer_lm.cpp", "09");
}

}  // namespace g2c::transformer
