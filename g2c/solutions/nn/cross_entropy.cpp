// Module 03 — reference solution for g2c/nn/cross_entropy.cpp.
#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor CrossEntropyLoss::forward(const torch::Tensor& logits,
                                        const torch::Tensor& targets) const {
  check_cross_entropy_inputs(logits, targets);
  // loss_i = log Σ_j exp(logits_ij) - logits_i,target. Shifting each row by its max m_i leaves the
  // log-sum-exp unchanged (it comes back as + m_i) and keeps every exp argument ≤ 0, so nothing
  // overflows even for logits in the thousands.
  const auto row_max = std::get<0>(logits.max(/*dim=*/1, /*keepdim=*/true));  // (B, 1)
  const auto log_sum_exp =
      row_max.squeeze(1) + torch::log(torch::exp(logits - row_max).sum(/*dim=*/1));  // (B)
  const auto target_logit =
      logits.gather(1, targets.to(torch::kLong).unsqueeze(1)).squeeze(1);  // (B)
  return (log_sum_exp - target_logit).mean();
}

}  // namespace g2c::nn
