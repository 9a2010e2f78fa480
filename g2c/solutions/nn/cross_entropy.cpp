// Module 03 — reference solution for g2c/nn/cross_entropy.cpp.
#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor CrossEntropyLoss::forward(const torch::Tensor& logits,
                                        const torch::Tensor& targets) const {
  check_cross_entropy_inputs(logits, targets);
  // The row max only shifts the logits so that exp() cannot overflow; the loss does not depend on
  // it. Detached, it costs autograd nothing (max's gradient would be a scatter into a zero tensor
  // as large as the logits), and amax does not look for the max's index.
  const auto row_max = logits.amax(/*dim=*/1, /*keepdim=*/true).detach();  // (B, 1)
  const auto shifted = logits - row_max;                                   // (B, C)
  const auto log_sum_exp = shifted.exp().sum(/*dim=*/1).log();             // (B)
  const auto target_logit = shifted.gather(1, targets.to(torch::kLong).unsqueeze(1)).squeeze(1);
  return (log_sum_exp - target_logit).mean();
}

}  // namespace g2c::nn
