// Module 03 — your work: one step of stochastic gradient descent.
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

void SGD::step() {
  // TODO: p <- p - lr · (g + weight_decay · p) for every parameter of params_ that has a gradient
  // (skip the others), in place, so that the model keeps the same tensors; the update itself must
  // not be recorded by autograd.
  // Hints, one step at a time: scripts/hint.sh 03 SGD::step
  throw g2c::todo("SGD::step", "g2c/nn/sgd.cpp", "03");
}

}  // namespace g2c::nn
