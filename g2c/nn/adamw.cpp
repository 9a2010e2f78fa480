// Module 03b — your work: one step of AdamW.
#include <cmath>

#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

void AdamW::step() {
  // TODO: step_count += 1, once per call and first (even when no parameter has a gradient);
  // t = step_count. Then inside a torch::NoGradGuard, for each i whose params_[i].grad() is
  // defined (skip the others), with g = params_[i].grad():
  //   m[i].mul_(beta1).add_(g, 1 - beta1);  v[i].mul_(beta2).addcmul_(g, g, 1 - beta2);
  //   m_hat = m[i] / (1 - std::pow(beta1, t));  v_hat = v[i] / (1 - std::pow(beta2, t));
  //   if weight_decay != 0: params_[i].mul_(1 - lr * weight_decay)  (the weight, not the grad);
  //   params_[i].sub_(lr * m_hat / (v_hat.sqrt() + eps)).
  throw g2c::todo("AdamW::step", "g2c/nn/adamw.cpp", "03b");
}

}  // namespace g2c::nn
