// Loss functions. They hold no parameters, so they are plain callables, not modules.
#pragma once

#include "g2c/core/torch.h"

namespace g2c::nn {

/// Mean of squared differences. Example: pred [1, 2, 3], target [1, 2, 4] -> 1/3.
class MSELoss {
 public:
  torch::Tensor forward(const torch::Tensor& prediction, const torch::Tensor& target) const;
  torch::Tensor operator()(const torch::Tensor& prediction, const torch::Tensor& target) const {
    return forward(prediction, target);
  }
};

/// Cross-entropy of logits (B, C) against integer class targets (B), averaged over the batch.
/// Example: logits zeros(1, 4), target [0] -> ln 4.
/// subtle: computed as logsumexp(row) - row[target] after subtracting the row max, so logits of
/// 1000 do not overflow.
class CrossEntropyLoss {
 public:
  torch::Tensor forward(const torch::Tensor& logits, const torch::Tensor& targets) const;
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& targets) const {
    return forward(logits, targets);
  }
};

/// Shape checks shared by the cross-entropy implementations: logits (B, C), targets (B) integer.
void check_cross_entropy_inputs(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace g2c::nn
