// Module 06 — your work: the two bigram models.
#include "g2c/lm/bigram.h"

#include "g2c/core/errors.h"

namespace g2c::lm {

void CountsBigramLMImpl::fit(const torch::Tensor& ids) {
  // TODO: Count the bigrams of the stream: every adjacent pair (a, b) adds 1 to counts[a][b] of the
  // (V, V) table, on top of earlier fits; fewer than 2 ids have no pair. Check the ids first
  // (check_ids). Operations: two shifted slices of the ids, an index_put_ that accumulates (a plain
  // assignment counts a repeated pair once).
  // Hints, one step at a time: scripts/hint.sh 06 CountsBigramLM::fit
  throw g2c::todo("CountsBigramLM::fit", "g2c/lm/bigram.cpp", "06");
}

torch::Tensor CountsBigramLMImpl::logits(const torch::Tensor& context) {
  // TODO: Log-probabilities of the next token given the current one (the context's single column):
  // P(b | a) = (counts[a][b] + smoothing) / Σ_b' (counts[a][b'] + smoothing), (B, V). A row with
  // nothing counted and no smoothing is uniform (1/V), not 0/0. In float64, returned as float32; an
  // unseen pair without smoothing is log 0 = -inf.
  // Hints, one step at a time: scripts/hint.sh 06 CountsBigramLM::logits
  throw g2c::todo("CountsBigramLM::logits", "g2c/lm/bigram.cpp", "06");
}

torch::Tensor NeuralBigramLMImpl::forward(const torch::Tensor& context) {
  // TODO: The bigram model learned instead of counted: the current token (the context's single
  // column, (B)) -> its embedding (B, D) -> a projection to one logit per vocabulary token (B, V).
  // Hints, one step at a time: scripts/hint.sh 06 NeuralBigramLM::forward
  throw g2c::todo("NeuralBigramLM::forward", "g2c/lm/bigram.cpp", "06");
}

}  // namespace g2c::lm
