// Module 11 — reference solution for g2c/sampling/top_p.cpp.
#include <limits>

#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_p_filter(const torch::Tensor& logits, double p) {
  check_top_p(logits, p);
  if (p >= 1.0) return logits.clone();  // the whole mass: nothing to drop
  const auto [sorted, order] = logits.sort(/*dim=*/-1, /*descending=*/true);  // (…, V) each
  const auto probs = torch::softmax(sorted, /*dim=*/-1);                      // descending
  const auto before = probs.cumsum(/*dim=*/-1) - probs;  // mass ranked strictly above each token
  // subtle: compare the mass *above* a token, not the mass up to and including it — the latter
  // drops the token that crosses p, and the argmax with it when it alone holds more than p.
  const auto drop = before >= p;  // (…, V), sorted order
  const auto mask = torch::zeros_like(drop).scatter(/*dim=*/-1, order, drop);  // original order
  return logits.masked_fill(mask, -std::numeric_limits<double>::infinity());
}

}  // namespace g2c::sampling
