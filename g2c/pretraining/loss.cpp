// Module 09b — your work: the language-model loss.
#include "g2c/pretraining/loss.h"
#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"

namespace g2c::pretraining {

torch::Tensor lm_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  // TODO: check_lm_cross_entropy_inputs(logits, targets); — a ValueError for wrong shapes.
  // Every position is one classification example. Flatten the batch and time axes together so
  // module 03's loss sees B·T rows of V logits and B·T target ids:
  // const auto vocab_size = logits.size(-1);
  // const auto flat_logits = logits.reshape({-1, vocab_size});   // (B·T, V)
  // const auto flat_targets = targets.reshape({-1});              // (B·T)
  // return g2c::nn::CrossEntropyLoss()(flat_logits, flat_targets);  — the mean over all B·T.
  // (reshape, not view: the logits may not be contiguous.)
  throw g2c::todo("lm_cross_entropy", "g2c/pretraining/loss.cpp", "09b");
}

}  // namespace g2c::pretraining
