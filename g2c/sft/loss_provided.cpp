#include "g2c/pretraining/token_checks.h"
#include "g2c/sft/loss.h"

namespace g2c::sft {

void check_masked_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                const torch::Tensor& mask) {
  g2c::pretraining::check_token_logits("masked_cross_entropy", logits, targets);
  g2c::pretraining::check_token_mask("masked_cross_entropy", targets, mask);
}

}  // namespace g2c::sft
