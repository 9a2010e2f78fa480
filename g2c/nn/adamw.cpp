// Module 03b — your work: one step of AdamW.
#include <cmath>

#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

void AdamW::step() {
  // TODO: Adam with decoupled weight decay. Per parameter with a gradient g (skip the others), at
  // step t (step_count, advanced first, once per call, counting from 1):
  //   m <- β1 m + (1 - β1) g      v <- β2 v + (1 - β2) g²
  //   m̂ = m / (1 - β1^t)          v̂ = v / (1 - β2^t)
  //   p <- p (1 - lr λ)           (the weight itself, not the gradient; λ = weight_decay)
  //   p <- p - lr m̂ / (√v̂ + ε)
  // m, v and p are updated in place, with autograd off. Operations: in-place
  // mul_/add_/addcmul_/sub_, std::pow.
  // Hints, one step at a time: scripts/hint.sh 03b AdamW::step
  throw g2c::todo("AdamW::step", "g2c/nn/adamw.cpp", "03b");
}

}  // namespace g2c::nn
