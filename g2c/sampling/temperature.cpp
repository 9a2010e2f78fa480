// Module 11 — your work: temperature.
#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature) {
  // TODO: check_temperature(logits, temperature); — a ValueError for T <= 0. Then
  // return logits / temperature; — every logit of every row divided by the same T. Softmax turns
  // a gap of g between two logits into a ratio e^(g/T) between their probabilities: T < 1 widens
  // the gaps (sharper), T > 1 narrows them (flatter), and the order never changes.
  throw g2c::todo("apply_temperature", "g2c/sampling/temperature.cpp", "11");
}

}  // namespace g2c::sampling
