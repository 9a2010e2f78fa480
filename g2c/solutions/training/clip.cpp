// Module 03b — reference solution for g2c/training/clip.cpp.
#include "g2c/training/clip.h"

namespace g2c::training {

double clip_grad_norm_(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return 0.0;

  torch::NoGradGuard no_grad;
  // √(Σ_p ‖g_p‖²) is the norm of the per-tensor norms: one small reduction per tensor on its
  // device, then a single read back to the host for the value we return.
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  const auto device = grads.front().device();
  for (const auto& g : grads) norms.push_back(g.norm().to(device, torch::kDouble));
  const double total = torch::stack(norms).norm().item<double>();

  if (total > max_norm) {  // false for NaN: a non-finite norm leaves the gradients as they are
    const double scale = max_norm / (total + 1e-6);
    for (auto& g : grads) g.mul_(scale);  // the same factor for all: the direction is kept
  }
  return total;
}

}  // namespace g2c::training
