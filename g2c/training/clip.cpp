// Module 03b — your work: global-norm gradient clipping.
#include "g2c/training/clip.h"

#include <cmath>

#include "g2c/core/errors.h"

namespace g2c::training {

double clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm) {
  // TODO: keep the params whose p.grad().defined(); none -> return 0.0. One global norm over all
  // of them: total = std::sqrt(sum of g.pow(2).sum().item<double>()). If total > max_norm, inside
  // a torch::NoGradGuard multiply every grad in place by max_norm / (total + 1e-6)
  // (p.mutable_grad().mul_(scale)); otherwise leave them alone. Return the pre-clip total.
  throw g2c::todo("clip_grad_norm_", "g2c/training/clip.cpp", "03b");
}

}  // namespace g2c::training
