// Module 11 — reference solution for g2c/sampling/top_k.cpp.
#include <algorithm>
#include <limits>

#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_k_filter(const torch::Tensor& logits, std::int64_t k) {
  check_top_k(logits, k);
  const auto keep = std::min<std::int64_t>(k, logits.size(-1));
  // The keep-th largest logit of each row: (…, 1), broadcast against its own row only.
  const auto threshold = std::get<0>(logits.topk(keep, /*dim=*/-1)).narrow(/*dim=*/-1, keep - 1, 1);
  return logits.masked_fill(logits < threshold, -std::numeric_limits<double>::infinity());
}

}  // namespace g2c::sampling
