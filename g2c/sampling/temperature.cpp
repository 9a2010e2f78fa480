// Module 11 — your work: temperature.
#include "g2c/core/errors.h"
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature) {
  // TODO: logits / T for every logit: softmax turns a gap g between two logits into a ratio
  // e^(g/T), so T < 1 sharpens, T > 1 flattens, and the order never changes. A new tensor; refuse T
  // <= 0 first (check_temperature).
  // Hints, one step at a time: scripts/hint.sh 11 apply_temperature
  throw g2c::todo("apply_temperature", "g2c/sampling/temperature.cpp", "11");
}

}  // namespace g2c::sampling
