// Module 11 — reference solution for g2c/sampling/repetition_penalty.cpp.
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_repetition_penalty(const torch::Tensor& logits,
                                       const torch::Tensor& previous_ids, double penalty) {
  check_repetition_penalty(logits, previous_ids, penalty);
  auto ids = previous_ids.to(logits.device(), torch::kLong);
  if (ids.dim() == 1) ids = ids.unsqueeze(0).expand({logits.size(0), -1});  // (B, T), shared
  const auto seen = logits.gather(/*dim=*/-1, ids);                         // (B, T)
  const auto penalized = torch::where(seen > 0, seen / penalty, seen * penalty);
  // A repeated id is written more than once, always with the same value: penalised once.
  return logits.scatter(/*dim=*/-1, ids, penalized);  // (B, V)
}

}  // namespace g2c::sampling
