#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

Optimizer::Optimizer(std::vector<torch::Tensor> params) : params_(std::move(params)) {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined())
      throw ValueError(fmt::format("optimizer parameter {} is undefined", i));
  }
}

void Optimizer::zero_grad() {
  for (auto& p : params_) {
    if (p.grad().defined()) {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

SGD::SGD(std::vector<torch::Tensor> params, double lr_, double weight_decay_)
    : Optimizer(std::move(params)), lr(lr_), weight_decay(weight_decay_) {
  if (lr < 0) throw ValueError(fmt::format("SGD: learning rate must be >= 0, got {}", lr));
  if (weight_decay < 0)
    throw ValueError(fmt::format("SGD: weight_decay must be >= 0, got {}", weight_decay));
}

AdamW::AdamW(std::vector<torch::Tensor> params, double lr_, std::pair<double, double> betas_,
             double eps_, double weight_decay_)
    : Optimizer(std::move(params)), lr(lr_), betas(betas_), eps(eps_), weight_decay(weight_decay_) {
  if (lr < 0) throw ValueError(fmt::format("AdamW: learning rate must be >= 0, got {}", lr));
  if (betas.first < 0 || betas.first >= 1 || betas.second < 0 || betas.second >= 1) {
    throw ValueError(
        fmt::format("AdamW: betas must lie in [0, 1), got ({}, {})", betas.first, betas.second));
  }
  if (eps < 0) throw ValueError(fmt::format("AdamW: eps must be >= 0, got {}", eps));
  steps.assign(params_.size(), 0);
  for (const auto& p : params_) {
    exp_avg.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    exp_avg_sq.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  }
}

}  // namespace g2c::nn
