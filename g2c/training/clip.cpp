// Module 03b — your work: global-norm gradient clipping.
#include "g2c/training/clip.h"

#include <cmath>

#include "g2c/core/errors.h"

namespace g2c::training {

double clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm) {
  // TODO: Clip by the global norm: the norm of all gradients seen as one vector, √(Σ_p ‖g_p‖²).
  // When it exceeds max_norm, scale every gradient in place by max_norm / (norm + 1e-6) — the same
  // factor for all, so the direction is kept. Return the norm before clipping (0 when no parameter
  // has a gradient). Operations: a norm per gradient, a norm of those, an in-place multiply.
  // Hints, one step at a time: scripts/hint.sh 03b clip_grad_norm_
  throw g2c::todo("clip_grad_norm_", "g2c/training/clip.cpp", "03b");
}

}  // namespace g2c::training
