// Module 06 — your work: the MLP language model's forward pass.
#include "g2c/lm/mlp.h"

#include "g2c/core/errors.h"

namespace g2c::lm {

torch::Tensor MLPLanguageModelImpl::forward(const torch::Tensor& context) {
  // TODO: Bengio's model: the N context tokens' embeddings side by side (concatenated, so position
  // matters), a tanh hidden layer, then one logit per vocabulary token: (B, N) -> (B, N, D) -> (B,
  // N·D) -> (B, H) -> (B, V).
  // Hints, one step at a time: scripts/hint.sh 06 MLPLanguageModel::forward
  throw g2c::todo("MLPLanguageModel::forward", "g2c/lm/mlp.cpp", "06");
}

}  // namespace g2c::lm
