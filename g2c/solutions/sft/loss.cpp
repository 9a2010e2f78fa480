// Module 13 — reference solution for g2c/sft/loss.cpp.
#include "g2c/sft/loss.h"

namespace g2c::sft {

torch::Tensor masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                   const torch::Tensor& mask) {
  check_masked_cross_entropy(logits, targets, mask);
  // −log p(target) at every position: (B, T, V) -> (B, T, 1) -> (B, T)
  const auto per_position = -torch::log_softmax(logits, /*dim=*/-1)
                                 .gather(/*dim=*/-1, targets.to(torch::kLong).unsqueeze(-1))
                                 .squeeze(-1);
  const auto weights = mask.to(logits.dtype());  // (B, T): 1 where the position counts
  // Divide by the number of counted positions (B·T would shrink the loss with the prompt's
  // length); at least 1, so an empty mask gives 0 rather than 0/0.
  return (per_position * weights).sum() / weights.sum().clamp_min(1.0);
}

}  // namespace g2c::sft
