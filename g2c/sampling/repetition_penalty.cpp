// Module 11 — your work: the repetition penalty.
#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_repetition_penalty(const torch::Tensor& logits,
                                       const torch::Tensor& previous_ids, double penalty) {
  // TODO: CTRL's penalty on every id already seen: a positive logit is divided by the penalty, a
  // negative one multiplied by it (dividing would raise it), once per id however often it appeared.
  // previous_ids is one history (T) shared by the batch or one per row (B, T); logits are (B, V). A
  // new tensor; check first (check_repetition_penalty). Operations: expand, gather, where, scatter.
  // Hints, one step at a time: scripts/hint.sh 11 apply_repetition_penalty
  throw g2c::todo("apply_repetition_penalty", "g2c/sampling/repetition_penalty.cpp", "11");
}

}  // namespace g2c::sampling
