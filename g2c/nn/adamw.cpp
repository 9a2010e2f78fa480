// Module 03b — your work: one step of AdamW.
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

void AdamW::step() {
  // TODO: without autograd, for each parameter i with a gradient g: steps[i] += 1;
  // p *= 1 - lr * weight_decay; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  // p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
  throw g2c::todo("AdamW::step", "g2c/nn/adamw.cpp", "03b");
}

}  // namespace g2c::nn
