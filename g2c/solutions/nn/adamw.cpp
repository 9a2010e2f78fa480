// Module 03b — reference solution for g2c/nn/adamw.cpp.
//
// Every update is in place and every scalar stays on the host, so a step launches a handful of
// element-wise kernels per parameter and never waits for the device.
#include <cmath>

#include "g2c/nn/optim.h"

namespace g2c::nn {

void AdamW::step() {
  ++step_count;  // once per call, before anything else: the t of the bias correction
  torch::NoGradGuard no_grad;
  const auto t = static_cast<double>(step_count);
  const double bias_correction1 = 1.0 - std::pow(beta1, t);
  const double bias_correction2 = 1.0 - std::pow(beta2, t);
  // p -= lr m̂ / (√v̂ + eps)  with  m̂ = m / bc1,  √v̂ = √v / √bc2.
  const double step_size = lr / bias_correction1;
  const double sqrt_bias_correction2 = std::sqrt(bias_correction2);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    const auto& g = p.grad();
    if (!g.defined()) continue;  // unused this step: m[i], v[i] and p stay as they are
    m[i].lerp_(g, 1.0 - beta1);  // beta1 m + (1 - beta1) g, in one pass
    v[i].mul_(beta2).addcmul_(g, g, 1.0 - beta2);
    if (weight_decay != 0.0) p.mul_(1.0 - lr * weight_decay);  // decoupled: the weight itself
    const auto denominator = v[i].sqrt().div_(sqrt_bias_correction2).add_(eps);  // √v̂ + eps
    p.addcdiv_(m[i], denominator, -step_size);
  }
}

}  // namespace g2c::nn
