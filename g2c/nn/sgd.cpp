// Module 03 — your work: one step of stochastic gradient descent.
#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

void SGD::step() {
  // TODO: inside a torch::NoGradGuard, for every parameter p in params_ that has a gradient:
  // p -= lr * (grad + weight_decay * p), in place (p.sub_), so p stays the same leaf tensor.
  throw g2c::todo("SGD::step", "g2c/nn/sgd.cpp", "03");
}

}  // namespace g2c::nn
