// Module 03 — reference solution for g2c/nn/cross_entropy.cpp.
#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor CrossEntropyLoss::forward(const torch::Tensor& logits,
                                        const torch::Tensor& targets) const {
  check_cross_entropy_inputs(logits, targets);
  const auto shifted = logits - std::get<0>(logits.max(/*dim=*/1, /*keepdim=*/true));  // (B, C)
  const auto log_sum_exp = shifted.exp().sum(/*dim=*/1).log();                         // (B)
  const auto target_logit = shifted.gather(1, targets.to(torch::kLong).unsqueeze(1)).squeeze(1);
  return (log_sum_exp - target_logit).mean();
}

}  // namespace g2c::nn
