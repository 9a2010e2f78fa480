// Module 09b — the language-model loss: cross-entropy at every position of every sequence.
//
// The model's logits (B, T, V) hold one next-token prediction per position, and the targets
// (B, T) the token that actually came next. Flattening both to B·T rows turns the batch into B·T
// ordinary classification examples, and module 03's CrossEntropyLoss averages over all of them:
//   logits (B, T, V) -> (B·T, V)      targets (B, T) -> (B·T)      loss: scalar
// An untrained model spreads its probability evenly, so its loss starts near ln V (ln 264 = 5.58).
#pragma once

#include "g2c/core/torch.h"

namespace g2c::pretraining {

/// Mean next-token cross-entropy over all B·T positions, a 0-dim tensor that backpropagates into
/// the logits. ValueError unless logits is (B, T, V) floating point and targets is (B, T) integer.
/// Example: logits zeros(3, 4, 7), any targets -> ln 7 = 1.9459.
torch::Tensor lm_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets);

/// The entry checks of lm_cross_entropy: logits (B, T, V) floating point, targets (B, T) integer
/// with the same B and T. ValueError naming both shapes otherwise.
void check_lm_cross_entropy_inputs(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace g2c::pretraining
