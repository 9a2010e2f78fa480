// Module 13 — your work: the loss on the reply's tokens only.
#include "g2c/sft/loss.h"

#include "g2c/core/errors.h"

namespace g2c::sft {

torch::Tensor masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                   const torch::Tensor& mask) {
  // TODO: Cross-entropy at every position, (B, T, V) -> (B, T): per_position[b, t] =
  // −log_softmax(logits[b, t])[targets[b, t]] — targets are int64 ids, the index gather takes
  // once they are unsqueezed to (B, T, 1). Then the mean over the counted positions only:
  // Σ mask · per_position / Σ mask, with the mask as the logits' dtype, and 0 (not 0/0 = NaN)
  // when no position counts — clamping the count to at least 1 does it without a branch. Check
  // the arguments first (check_masked_cross_entropy).
  // Operations: torch::log_softmax, gather, squeeze, to(dtype), sum, clamp_min.
  // Hints, one step at a time: scripts/hint.sh 13 masked_cross_entropy
  throw g2c::todo("masked_cross_entropy", "g2c/sft/loss.cpp", "13");
}

}  // namespace g2c::sft
