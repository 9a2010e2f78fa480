// Module 09b — your work: the language-model loss.
#include "g2c/pretraining/loss.h"
#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"

namespace g2c::pretraining {

torch::Tensor lm_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  // TODO: Every position of every window is one classification example: the mean cross-entropy
  // (module 03's) over all B·T of them, (B, T, V) logits and (B, T) targets -> a scalar. The mean,
  // not a sum, so the loss does not grow with B or T (uniform logits give ln V). Check the shapes
  // first (check_lm_cross_entropy_inputs). Operations: reshape (the logits may not be contiguous).
  // Hints, one step at a time: scripts/hint.sh 09b lm_cross_entropy
  throw g2c::todo("lm_cross_entropy", "g2c/pretraining/loss.cpp", "09b");
}

}  // namespace g2c::pretraining
