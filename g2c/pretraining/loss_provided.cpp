#include "g2c/pretraining/loss.h"
#include "g2c/pretraining/token_checks.h"

namespace g2c::pretraining {

void check_lm_cross_entropy_inputs(const torch::Tensor& logits, const torch::Tensor& targets) {
  check_token_logits("lm_cross_entropy", logits, targets);
}

}  // namespace g2c::pretraining
