// Module 09b — reference solution for g2c/pretraining/loss.cpp.
#include "g2c/pretraining/loss.h"
#include "g2c/nn/losses.h"

namespace g2c::pretraining {

torch::Tensor lm_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  check_lm_cross_entropy_inputs(logits, targets);
  const auto vocab_size = logits.size(-1);
  // Each of the B·T positions is one classification example; reshape copies only when needed.
  const auto flat_logits = logits.reshape({-1, vocab_size});  // (B, T, V) -> (B·T, V)
  const auto flat_targets = targets.reshape({-1});            // (B, T) -> (B·T)
  return g2c::nn::CrossEntropyLoss()(flat_logits, flat_targets);
}

}  // namespace g2c::pretraining
