#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/nn/fused_adamw.h"
#include "g2c/nn/optim.h"

namespace g2c::nn {

Optimizer::Optimizer(std::vector<torch::Tensor> params, double lr_)
    : lr(lr_), params_(std::move(params)) {
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

// The checks are written `!(x >= 0)` so that NaN is rejected too.
SGD::SGD(std::vector<torch::Tensor> params, double lr_, double weight_decay_)
    : Optimizer(std::move(params), lr_), weight_decay(weight_decay_) {
  if (!(lr >= 0)) throw ValueError(fmt::format("SGD: learning rate must be >= 0, got {}", lr));
  if (!(weight_decay >= 0))
    throw ValueError(fmt::format("SGD: weight_decay must be >= 0, got {}", weight_decay));
}

AdamW::AdamW(std::vector<torch::Tensor> params, const AdamWOptions& options)
    : AdamW(std::move(params), options.lr(), {options.beta1(), options.beta2()}, options.eps(),
            options.weight_decay()) {}

AdamW::AdamW(std::vector<torch::Tensor> params, double lr_, std::pair<double, double> betas,
             double eps_, double weight_decay_)
    : Optimizer(std::move(params), lr_),
      beta1(betas.first),
      beta2(betas.second),
      eps(eps_),
      weight_decay(weight_decay_) {
  if (!(lr >= 0)) throw ValueError(fmt::format("AdamW: learning rate must be >= 0, got {}", lr));
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1)) {
    throw ValueError(fmt::format("AdamW: betas must lie in [0, 1), got ({}, {})", beta1, beta2));
  }
  if (!(eps >= 0)) throw ValueError(fmt::format("AdamW: eps must be >= 0, got {}", eps));
  if (!(weight_decay >= 0))
    throw ValueError(fmt::format("AdamW: weight_decay must be >= 0, got {}", weight_decay));
  m.reserve(params_.size());
  v.reserve(params_.size());
  for (const auto& p : params_) {
    // Same shape, dtype, device and memory layout as the parameter (and no requires_grad).
    m.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    v.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  }
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name,
                                          std::vector<torch::Tensor> params, double lr,
                                          double weight_decay, bool fused) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "sgd") return std::make_unique<SGD>(std::move(params), lr, weight_decay);
  if (lower == "adamw") {
    const auto options = AdamWOptions(lr).weight_decay(weight_decay);
    if (fused) return std::make_unique<FusedAdamW>(std::move(params), options);
    return std::make_unique<AdamW>(std::move(params), options);
  }
  throw ValueError(fmt::format("optimizer must be 'sgd' or 'adamw', got '{}'", name));
}

}  // namespace g2c::nn
