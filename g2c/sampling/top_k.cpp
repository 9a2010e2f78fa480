// Module 11 — your work: the top-k filter.
#include <algorithm>
#include <limits>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_k_filter(const torch::Tensor& logits, std::int64_t k) {
  // TODO: check_top_k(logits, k); — a ValueError for k <= 0. Asking for more tokens than V keeps
  // them all: const auto keep = std::min<std::int64_t>(k, logits.size(-1));
  // The keep-th largest logit of each row is that row's threshold, (…, 1), so the comparison
  // below works row by row (never one threshold for the whole tensor):
  // const auto threshold =
  //     std::get<0>(logits.topk(keep, /*dim=*/-1)).narrow(/*dim=*/-1, keep - 1, 1);
  // return logits.masked_fill(logits < threshold, -std::numeric_limits<double>::infinity());
  // — a new tensor; the softmax afterwards gives every -inf probability 0.
  throw g2c::todo("top_k_filter", "g2c/sampling/top_k.cpp", "11");
}

}  // namespace g2c::sampling
