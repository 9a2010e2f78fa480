// Module 13 — the SFT loss: next-token cross-entropy averaged over the reply's positions only.
//
//   per_position[b, t] = −log softmax(logits[b, t])[targets[b, t]]       (B, T)
//   loss = Σ mask · per_position / Σ mask                                 scalar
// The denominator is the number of positions that count, not B·T: dividing by B·T would make the
// gradient shrink as prompts grow longer, though the reply is what is being learned. With every
// position counted it is module 09b's lm_cross_entropy; with none it is 0 (not 0/0 = NaN).
#pragma once

#include "g2c/core/torch.h"

namespace g2c::sft {

/// Mean cross-entropy over the positions where mask != 0, a 0-dim tensor that backpropagates into
/// the logits (only through the counted positions); 0 when nothing is counted. The mask may be
/// integer or floating point. ValueError (check_masked_cross_entropy) unless logits is (B, T, V)
/// floating point, targets (B, T) integer and mask (B, T).
/// Example: mask [[1, 1, 0, 0]] -> the mean of the first two positions' losses.
torch::Tensor masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                   const torch::Tensor& mask);

/// The entry checks of masked_cross_entropy, naming the shapes it got.
void check_masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                const torch::Tensor& mask);

}  // namespace g2c::sft
