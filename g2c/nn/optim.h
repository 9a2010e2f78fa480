// Optimizers written by hand: plain SGD with weight decay (module 03), and AdamW (module 03b).
//
// Both hold the parameter tensors themselves (not copies) and update them in place, outside
// autograd. `lr` lives in the base class and may be changed between steps: a schedule such as
// g2c::training::cosine_with_warmup writes it before every step through an `Optimizer&`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::nn {

class Optimizer {
 public:
  Optimizer(std::vector<torch::Tensor> params, double lr);
  virtual ~Optimizer() = default;

  /// Sets every existing gradient to zero in place; parameters without a gradient are skipped.
  void zero_grad();
  /// One update of every parameter that has a gradient.
  virtual void step() = 0;

  /// The parameters, in the order given: the very tensors passed in (`params()[0].is_same(p)`).
  const std::vector<torch::Tensor>& params() const { return params_; }

  /// Learning rate of the next step(); public so a trainer can schedule it.
  double lr;

 protected:
  std::vector<torch::Tensor> params_;
};

/// p -= lr * (grad + weight_decay * p), outside autograd.
/// Example: p = [1, 2, 3], grad = [0.1, 0.2, 0.3], lr = 0.5 -> [0.95, 1.9, 2.85].
class SGD : public Optimizer {
 public:
  SGD(std::vector<torch::Tensor> params, double lr, double weight_decay = 0.0);
  void step() override;

  double weight_decay;
};

/// Adam with decoupled weight decay (Loshchilov & Hutter), as the course defines it.
///
/// One step (t = step_count after the increment), for every parameter p with a gradient g:
///   m = beta1 m + (1 - beta1) g          v = beta2 v + (1 - beta2) g²
///   m̂ = m / (1 - beta1^t)                v̂ = v / (1 - beta2^t)
///   p *= 1 - lr * weight_decay           (only when weight_decay != 0: decay the weight itself)
///   p -= lr * m̂ / (√v̂ + eps)
/// Example: p = [1], g = [0.1], lr = 1e-3 -> m = [0.01], v = [1e-5], m̂ = 0.1, v̂ = 0.01,
/// p = [0.999].
///
/// subtle: `step_count` is one counter for the whole optimizer, +1 per step() call even when no
/// parameter has a gradient, and parameters without a gradient are skipped (their m and v stay
/// as they were). torch::optim::AdamW keeps a counter per parameter instead; the two agree
/// whenever every parameter has a gradient on every step, and differ for a parameter first used
/// at a later step (here it is bias-corrected with the global t, there with t = 1).
///
/// m and v are created at construction, on each parameter's device and dtype: move the model
/// first (`model->to(device)`), then build the optimizer.
/// AdamW's hyper-parameters with their defaults, LibTorch style:
/// AdamW(params, AdamWOptions(/*lr=*/3e-4).weight_decay(0.1)).
struct AdamWOptions {
  explicit AdamWOptions(double lr) : lr_(lr) {}
  TORCH_ARG(double, lr);
  TORCH_ARG(double, beta1) = 0.9;    // decay of the first moment (the mean gradient)
  TORCH_ARG(double, beta2) = 0.999;  // decay of the second moment (the mean squared gradient)
  TORCH_ARG(double, eps) = 1e-8;     // keeps the step finite where v̂ is 0
  TORCH_ARG(double, weight_decay) = 0.0;
};

class AdamW : public Optimizer {
 public:
  /// The same as the positional constructor, from options.
  AdamW(std::vector<torch::Tensor> params, const AdamWOptions& options);
  /// ValueError for lr < 0, a beta outside [0, 1), eps < 0 or weight_decay < 0.
  AdamW(std::vector<torch::Tensor> params, double lr,
        std::pair<double, double> betas = {0.9, 0.999}, double eps = 1e-8,
        double weight_decay = 0.0);
  void step() override;

  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  std::int64_t step_count = 0;   // step() calls so far: t of the bias correction
  std::vector<torch::Tensor> m;  // first moment per parameter, zeros like it at the start
  std::vector<torch::Tensor> v;  // second moment per parameter, zeros like it at the start
};

/// The course's optimizers by name: "sgd" (SGD(lr, weight_decay)) or "adamw"
/// (AdamW(AdamWOptions(lr).weight_decay(weight_decay))), any case. With `fused`, "adamw" is the
/// provided FusedAdamW (g2c/nn/fused_adamw.h): the same update in LibTorch's fused kernel.
/// ValueError for another name, naming the two.
/// Example: auto optimizer = make_optimizer("adamw", model->parameters(), 3e-4, 0.1);
std::unique_ptr<Optimizer> make_optimizer(const std::string& name,
                                          std::vector<torch::Tensor> params, double lr,
                                          double weight_decay = 0.0, bool fused = false);

}  // namespace g2c::nn
