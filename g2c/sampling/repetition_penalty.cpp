// Module 11 — your work: the repetition penalty.
#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_repetition_penalty(const torch::Tensor& logits,
                                       const torch::Tensor& previous_ids, double penalty) {
  // TODO: check_repetition_penalty(logits, previous_ids, penalty); then bring the ids next to the
  // logits, one row of history per row of logits — (B, T):
  // auto ids = previous_ids.to(logits.device(), torch::kLong);
  // if (ids.dim() == 1) ids = ids.unsqueeze(0).expand({logits.size(0), -1});
  // Read the logits of the seen tokens: const auto seen = logits.gather(/*dim=*/-1, ids);
  // Make each less likely — a positive logit shrinks, a negative one grows more negative:
  // const auto penalized = torch::where(seen > 0, seen / penalty, seen * penalty);
  // return logits.scatter(/*dim=*/-1, ids, penalized); — a new tensor. An id seen twice is
  // written twice with the same value, so it is penalised once (a loop that divides once per
  // occurrence would penalise it twice).
  throw g2c::todo("apply_repetition_penalty", "g2c/sampling/repetition_penalty.cpp", "11");
}

}  // namespace g2c::sampling
