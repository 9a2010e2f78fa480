#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/dpo/loss.h"
#include "g2c/pretraining/token_checks.h"

namespace g2c::dpo {

void check_sequence_logprob(const torch::Tensor& logits, const torch::Tensor& targets,
                            const torch::Tensor& mask) {
  g2c::pretraining::check_token_logits("sequence_logprob", logits, targets);
  g2c::pretraining::check_token_mask("sequence_logprob", targets, mask);
}

void check_dpo_loss(const torch::Tensor& policy_chosen_logp,
                    const torch::Tensor& policy_rejected_logp, const torch::Tensor& ref_chosen_logp,
                    const torch::Tensor& ref_rejected_logp, double beta) {
  if (!(beta > 0.0)) {
    throw ValueError(fmt::format(
        "dpo_loss needs beta > 0, got {}: with beta = 0 the loss is ln 2 whatever the policy does "
        "(use 0.1 to 0.5)",
        beta));
  }
  const torch::Tensor* all[] = {&policy_chosen_logp, &policy_rejected_logp, &ref_chosen_logp,
                                &ref_rejected_logp};
  const char* names[] = {"policy_chosen_logp", "policy_rejected_logp", "ref_chosen_logp",
                         "ref_rejected_logp"};
  for (int i = 0; i < 4; ++i) {
    const auto& t = *all[i];
    if (!t.defined() || t.dim() != 1 || !t.is_floating_point()) {
      throw ValueError(fmt::format(
          "dpo_loss expects four floating-point (B,) log-probabilities (sequence_logprob's "
          "output), got {} {}",
          names[i],
          t.defined() ? describe_shape(t) + " " + c10::toString(t.scalar_type()) : "undefined"));
    }
    if (!t.sizes().equals(policy_chosen_logp.sizes())) {
      throw ValueError(fmt::format(
          "dpo_loss needs the four log-probabilities of one batch, the same (B,), got "
          "policy_chosen_logp {} and {} {}",
          describe_shape(policy_chosen_logp, {"B"}), names[i], describe_shape(t, {"B"})));
    }
  }
}

}  // namespace g2c::dpo
