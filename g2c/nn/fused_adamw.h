// Module 03b, implemented for you — the fast path of AdamW: the course's update, computed for all
// parameters at once by LibTorch's fused AdamW kernel.
//
// The course's AdamW::step walks the parameters one by one and spends about ten small operations
// on each (two moment updates, two bias corrections, the decay, the step). On a GPU every one of
// them is a kernel launch, so a model with 69 parameter tensors launches hundreds of tiny kernels
// per step and waits on the launches, not the arithmetic. at::_fused_adamw_ does the whole update
// in one kernel per group of tensors (on the CPU, one vectorised loop per tensor).
//
// FusedAdamW *is* an AdamW: the same hyper-parameters and the same state (step_count, m, v), so
// checkpoints, schedules and the Trainer treat both alike. A check in
// tests/framework/training_oracles.cpp proves its steps equal the course's AdamW.
//
//   g2c::nn::FusedAdamW optimizer(model->parameters(), g2c::nn::AdamWOptions(3e-4));
#pragma once

#include <vector>

#include "g2c/core/torch.h"

#include "g2c/nn/optim.h"

namespace g2c::nn {

class FusedAdamW : public AdamW {
 public:
  /// The same checks as AdamW (ValueError for lr < 0, a beta outside [0, 1), eps < 0 or
  /// weight_decay < 0).
  FusedAdamW(std::vector<torch::Tensor> params, const AdamWOptions& options);

  /// One AdamW step of every parameter with a gradient, by at::_fused_adamw_; step_count advances
  /// by one per call, as in AdamW::step.
  void step() override;
};

}  // namespace g2c::nn
