// Module 03 — reference solution for g2c/nn/sgd.cpp.
#include "g2c/nn/optim.h"

namespace g2c::nn {

void SGD::step() {
  torch::NoGradGuard no_grad;  // the update itself must not become part of the graph
  for (auto& p : params_) {
    if (!p.grad().defined()) continue;
    auto update = p.grad();
    if (weight_decay != 0.0) update = update + weight_decay * p;
    p.sub_(lr * update);
  }
}

}  // namespace g2c::nn
