// Module 11 — your work: the top-p (nucleus) filter.
#include <limits>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_p_filter(const torch::Tensor& logits, double p) {
  // TODO: check_top_p(logits, p); — a ValueError unless 0 < p <= 1.
  // if (p >= 1.0) return logits.clone(); — all of the mass keeps everything (float rounding could
  // otherwise drop a tail token of probability 1e-20). Sort each row, largest first, remembering
  // where every entry came from:
  // const auto [sorted, order] = logits.sort(/*dim=*/-1, /*descending=*/true);
  // const auto probs = torch::softmax(sorted, /*dim=*/-1);  — descending probabilities (…, V)
  // const auto before = probs.cumsum(/*dim=*/-1) - probs;  — the mass ranked above each token
  // A token is dropped when the tokens above it already reach p: const auto drop = before >= p;
  // — the first token has nothing above it, so the argmax always survives. Back to the original
  // order: const auto mask = torch::zeros_like(drop).scatter(/*dim=*/-1, order, drop);
  // return logits.masked_fill(mask, -std::numeric_limits<double>::infinity());
  throw g2c::todo("top_p_filter", "g2c/sampling/top_p.cpp", "11");
}

}  // namespace g2c::sampling
