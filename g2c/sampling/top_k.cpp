// Module 11 — your work: the top-k filter.
#include <algorithm>
#include <limits>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_k_filter(const torch::Tensor& logits, std::int64_t k) {
  // TODO: Keep the k largest logits of each row and set the others to -inf (probability 0 after the
  // softmax): the threshold is the row's k-th largest logit, (…, 1), ties with it survive, k >= V
  // keeps all. A new tensor; refuse k <= 0 first (check_top_k). Operations: topk, narrow,
  // masked_fill.
  // Hints, one step at a time: scripts/hint.sh 11 top_k_filter
  throw g2c::todo("top_k_filter", "g2c/sampling/top_k.cpp", "11");
}

}  // namespace g2c::sampling
