#include "g2c/nn/fused_cross_entropy.h"

#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor fused_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  check_cross_entropy_inputs(logits, targets);
  const auto log_probs = torch::log_softmax(logits, /*dim=*/1);  // (B, C)
  return torch::nll_loss(log_probs, targets.to(torch::kLong));   // mean of -log p(target)
}

}  // namespace g2c::nn
