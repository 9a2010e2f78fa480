// Module 11 — your work: the top-p (nucleus) filter.
#include <limits>

#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor top_p_filter(const torch::Tensor& logits, double p) {
  // TODO: Keep the smallest set of most likely tokens whose probabilities reach p; set the rest to
  // -inf. In descending order a token is dropped when the mass ranked *above* it is already >= p,
  // so the argmax always stays; the decision is then put back in the original order. p = 1 keeps
  // everything (return a copy). Refuse p outside (0, 1] first (check_top_p). Operations: sort,
  // softmax, cumsum, scatter, masked_fill.
  // Hints, one step at a time: scripts/hint.sh 11 top_p_filter
  throw g2c::todo("top_p_filter", "g2c/sampling/top_p.cpp", "11");
}

}  // namespace g2c::sampling
