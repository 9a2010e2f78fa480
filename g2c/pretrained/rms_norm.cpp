// Module 16 — your work: RMSNorm.
#include "g2c/pretrained/rms_norm.h"

#include "g2c/core/errors.h"

namespace g2c::pretrained {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  // TODO: Divide each position's D features by their root mean square, then scale per feature:
  //   y = weight · x / √(mean(x², -1) + ε),
  // the mean of the squares over the last dimension only (kept as a size-1 dim so it broadcasts),
  // ε inside the square root, nothing subtracted. (…, D) -> (…, D).
  // Operations: pow, mean with keepdim, torch::sqrt.
  // Hints, one step at a time: scripts/hint.sh 16 rms_norm
  throw g2c::todo("rms_norm", "g2c/pretrained/rms_norm.cpp", "16");
}

}  // namespace g2c::pretrained
