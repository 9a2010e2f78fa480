// What a fine-tuning trainer's train_step is held to against the recipe written out in its test
// (modules 13 and 14: SFTTrainer and DPOTrainer on module 10's loop): this step's lr, the gradient
// norm before clipping, and every parameter after the update, each check with its own advice so
// that a missing zero_grad is told about accumulated gradients, not about the learning rate. And
// with_recipe, which changes the module 10 recipe inside such a trainer's options in one
// expression.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "torch_test.h"

namespace g2c::testing {

/// `options` (SFTTrainerOptions or DPOTrainerOptions) with its recipe changed by `change`, e.g.
///   with_recipe(options, [&](auto& recipe) { recipe.grad_clip(1.0).device("cpu"); })
template <typename Options, typename Change>
Options with_recipe(Options options, Change&& change) {
  std::forward<Change>(change)(options.trainer());
  return options;
}

/// `lr`, `grad_norm` and `params` are the trainer's after step `step`; the `expected_` ones the
/// recipe's (its own model, the same batches).
inline void check_step_follows_recipe(int step, double lr, double expected_lr, double grad_norm,
                                      double expected_grad_norm,
                                      const std::vector<torch::Tensor>& params,
                                      const std::vector<torch::Tensor>& expected_params) {
  {
    INFO("step " << step << ": lr " << lr << " vs " << expected_lr
                 << ": read this step's lr with lr() before trainer.step += 1");
    CHECK(lr == Approx(expected_lr).epsilon(1e-12));
  }
  {
    INFO("step " << step << ": grad_norm " << grad_norm << " vs " << expected_grad_norm
                 << (step > 0 ? ": the gradients still hold the previous step's — call "
                                "trainer.optimizer->zero_grad() before backward()"
                              : ": clip after backward and before the update; grad_norm is "
                                "clip_grad_norm_'s value on this step's gradients"));
    CHECK(grad_norm == Approx(expected_grad_norm).epsilon(1e-6));
  }
  REQUIRE(params.size() == expected_params.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    worst = std::max(worst, max_abs_diff(params[i], expected_params[i]));
  }
  INFO("largest parameter difference after step "
       << step << ": " << worst
       << " (zero_grad before backward; one optimizer step per train_step)");
  CHECK(worst < 1e-6);
}

}  // namespace g2c::testing
