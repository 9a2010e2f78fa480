#include "g2c/nn/fused_adamw.h"

#include <utility>

namespace g2c::nn {

namespace {

/// The tensors one fused call updates: parameters that share a device and a dtype.
struct FusedGroup {
  torch::Device device;
  torch::Dtype dtype;
  std::vector<torch::Tensor> params, grads, first, second, steps;
};

}  // namespace

FusedAdamW::FusedAdamW(std::vector<torch::Tensor> params, const AdamWOptions& options)
    : AdamW(std::move(params), options) {}

void FusedAdamW::step() {
  torch::NoGradGuard no_grad;
  ++step_count;  // one counter for the whole optimizer, as in AdamW::step
  std::vector<FusedGroup> groups;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    if (!p.grad().defined()) continue;  // skipped: its m and v stay as they were
    auto group = groups.begin();
    while (group != groups.end() &&
           (group->device != p.device() || group->dtype != p.scalar_type())) {
      ++group;
    }
    if (group == groups.end()) {
      groups.push_back({p.device(), p.scalar_type(), {}, {}, {}, {}, {}});
      group = std::prev(groups.end());
    }
    group->params.push_back(p);
    group->grads.push_back(p.grad());
    group->first.push_back(m[i]);
    group->second.push_back(v[i]);
  }
  for (auto& group : groups) {
    // The kernel reads t (for the bias corrections) from one float tensor per parameter, and only
    // reads it: every parameter of the group can share one.
    const auto t = torch::full({}, static_cast<double>(step_count),
                               torch::TensorOptions().dtype(torch::kFloat).device(group.device));
    group.steps.assign(group.params.size(), t);
    at::_fused_adamw_(group.params, group.grads, group.first, group.second,
                      /*max_exp_avg_sqs=*/{}, group.steps, lr, beta1, beta2, weight_decay, eps,
                      /*amsgrad=*/false, /*maximize=*/false);
  }
}

}  // namespace g2c::nn
