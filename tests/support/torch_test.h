// Tensor helpers for tests.
#pragma once

#include <optional>
#include <vector>

#include <torch/torch.h>

#include "g2c_test.h"

namespace g2c::testing {

/// The machine's accelerator: CUDA when this build has it and a GPU is present, else MPS, else
/// nullopt. Course tests tagged [accelerator] run the student's code there and on the CPU and
/// compare; without an accelerator they end with G2C_SKIP(kNoAccelerator).
inline std::optional<torch::Device> accelerator_device() {
  if (torch::cuda::is_available()) return torch::Device(torch::kCUDA);
  if (torch::hasMPS()) return torch::Device(torch::kMPS);
  return std::nullopt;
}

inline constexpr const char* kNoAccelerator =
    "no CUDA or MPS device on this machine; a grader with a GPU runs this check";

/// Largest absolute element-wise difference, as a double (for messages and tolerances).
inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

/// torch::allclose, but printing the largest difference when it fails.
inline bool close(const torch::Tensor& actual, const torch::Tensor& expected, double atol = 1e-6,
                  double rtol = 0.0) {
  if (actual.sizes() != expected.sizes()) {
    UNSCOPED_INFO("shape " << actual.sizes() << " != " << expected.sizes());
    return false;
  }
  const bool ok = torch::allclose(actual.to(torch::kDouble).cpu(),
                                  expected.to(torch::kDouble).cpu(), rtol, atol);
  if (!ok) UNSCOPED_INFO("max |difference| = " << max_abs_diff(actual.cpu(), expected.cpu()));
  return ok;
}

/// Python's torch.allclose(actual, expected, atol=atol) with its default rtol of 1e-5, as the
/// Python edition's tests write it: |actual - expected| <= atol + 1e-5·|expected|. Prints the
/// largest difference when they are not close.
inline bool py_allclose(const torch::Tensor& actual, const torch::Tensor& expected,
                        double atol = 1e-8) {
  return close(actual, expected, atol, /*rtol=*/1e-5);
}

/// Central finite differences of the scalar `objective()` with respect to every element of
/// `tensor` (changed in place and restored). Use float64 tensors: eps = 1e-6 then gives ~1e-9
/// accuracy for smooth functions.
template <typename Objective>
torch::Tensor numeric_gradient(Objective&& objective, torch::Tensor tensor, double eps = 1e-6) {
  torch::NoGradGuard no_grad;
  torch::Tensor numeric = torch::zeros_like(tensor);
  auto flat = tensor.view(-1);
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    const double saved = flat[i].item<double>();
    flat[i] = saved + eps;
    const double plus = objective().template item<double>();
    flat[i] = saved - eps;
    const double minus = objective().template item<double>();
    flat[i] = saved;
    numeric.view(-1)[i] = (plus - minus) / (2 * eps);
  }
  return numeric;
}

/// Backpropagates the scalar `objective()` once and checks the gradient it leaves on each of
/// `tensors` (float64 tensors that require grad: parameters, inputs) against numeric_gradient.
template <typename Objective>
void check_gradients(Objective&& objective, const std::vector<torch::Tensor>& tensors,
                     double atol = 1e-7) {
  for (const auto& tensor : tensors) {
    if (tensor.grad().defined()) tensor.grad().zero_();
  }
  objective().backward();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& tensor = tensors[i];
    const auto numeric = numeric_gradient(objective, tensor.detach());
    INFO("tensor " << i << " of " << tensors.size() << ", shape " << tensor.sizes());
    if (!tensor.grad().defined()) {
      // A parameter the forward pass never uses: backward() leaves its .grad undefined.
      FAIL_CHECK("backward() left no gradient on it (largest numeric gradient "
                 << numeric.abs().max().template item<double>()
                 << "): the forward pass does not use it — a sublayer skipped, or another "
                    "layer used in its place (ln1 twice instead of ln1 and ln2?)");
      continue;
    }
    const auto analytic = tensor.grad().clone();
    INFO("max |analytic - numeric| = " << max_abs_diff(analytic, numeric));
    CHECK(close(analytic, numeric, atol));
  }
}

}  // namespace g2c::testing
