// Module 03 — reference solution for g2c/nn/cross_entropy.cpp.
#include "g2c/nn/losses.h"

namespace g2c::nn {

torch::Tensor CrossEntropyLoss::forward(const torch::Tensor& logits,
                                        const torch::Tensor& targets) const {
  check_cross_entropy_inputs(logits, targets);
  // log_softmax is "subtract the row max, log-sum-exp" in one LibTorch kernel, forward and
  // backward: logits - max - log(sum(exp(logits - max))).
  const auto log_probs = logits.log_softmax(/*dim=*/1);  // (B, C)
  return -log_probs.gather(1, targets.to(torch::kLong).unsqueeze(1)).mean();
}

}  // namespace g2c::nn
