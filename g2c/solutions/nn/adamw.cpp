// Module 03b — reference solution for g2c/nn/adamw.cpp.
#include <cmath>

#include "g2c/nn/optim.h"

namespace g2c::nn {

void AdamW::step() {
  torch::NoGradGuard no_grad;
  const auto [beta1, beta2] = betas;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (!p.grad().defined()) continue;
    const auto& grad = p.grad();
    const auto t = static_cast<double>(++steps[i]);
    p.mul_(1.0 - lr * weight_decay);  // decoupled: decay the weight, not the gradient
    exp_avg[i].mul_(beta1).add_(grad, 1.0 - beta1);
    exp_avg_sq[i].mul_(beta2).addcmul_(grad, grad, 1.0 - beta2);
    const double bias_correction1 = 1.0 - std::pow(beta1, t);
    const double bias_correction2 = 1.0 - std::pow(beta2, t);
    const auto denom = (exp_avg_sq[i].sqrt() / std::sqrt(bias_correction2)).add_(eps);
    p.addcdiv_(exp_avg[i], denom, -lr / bias_correction1);
  }
}

}  // namespace g2c::nn
