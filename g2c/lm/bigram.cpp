// Module 06 — your work: the two bigram models.
#include "g2c/lm/bigram.h"

#include "g2c/core/errors.h"

namespace g2c::lm {

void CountsBigramLMImpl::fit(const torch::Tensor& ids) {
  // TODO: check_ids(ids); for every neighbouring pair (ids[i], ids[i + 1]) add 1 to counts at
  // that cell. Hint: counts.index_put_({current, next}, ones, /*accumulate=*/true).
  throw g2c::todo("CountsBigramLM::fit", "g2c/lm/bigram.cpp", "06");
}

torch::Tensor CountsBigramLMImpl::logits(const torch::Tensor& context) {
  // TODO: rows = counts[as_context(context)[:, 0]] + smoothing; divide each row by its sum and take
  // the log (B, V). A row with nothing counted (possible with smoothing 0) is uniform instead.
  throw g2c::todo("CountsBigramLM::logits", "g2c/lm/bigram.cpp", "06");
}

torch::Tensor NeuralBigramLMImpl::forward(const torch::Tensor& context) {
  // TODO: take the current token as_context(context)[:, 0] (B), embed it (B, D), and project it
  // to the vocabulary with proj (B, V).
  throw g2c::todo("NeuralBigramLM::forward", "g2c/lm/bigram.cpp", "06");
}

}  // namespace g2c::lm
