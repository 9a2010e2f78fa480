// The entry checks of every loss over next-token logits — module 09b's lm_cross_entropy, module
// 13's masked_cross_entropy, module 14's sequence_logprob — each message in the caller's name.
#pragma once

#include <string_view>

#include "g2c/core/torch.h"

namespace g2c::pretraining {

/// ValueError unless logits are floating-point (B, T, V) and targets integer (B, T) with the same
/// B and T. `function` names the caller in the message, e.g. "lm_cross_entropy".
void check_token_logits(std::string_view function, const torch::Tensor& logits,
                        const torch::Tensor& targets);

/// ValueError unless `mask` is defined and shaped like the (B, T) targets: one 0 or 1 per target.
void check_token_mask(std::string_view function, const torch::Tensor& targets,
                      const torch::Tensor& mask);

}  // namespace g2c::pretraining
