// Module 11 — reference solution for g2c/sampling/temperature.cpp.
#include "g2c/sampling/checks.h"
#include "g2c/sampling/warpers.h"

namespace g2c::sampling {

torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature) {
  check_temperature(logits, temperature);
  return logits / temperature;  // (…, V): same order, gaps scaled by 1/T
}

}  // namespace g2c::sampling
