// Module 02 — implemented for you: linear's input check, and the classifier forward pass built on
// your linear and softmax.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/tensors/forward.h"

namespace g2c::tensors {

namespace {

std::string shape_of(const torch::Tensor& t) {
  if (!t.defined()) return "(undefined)";
  return fmt::format("({})", fmt::join(t.sizes(), ", "));
}

}  // namespace

void check_linear_inputs(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  const bool defined = x.defined() && W.defined() && b.defined();
  const bool ok = defined && (x.dim() == 1 || x.dim() == 2) && W.dim() == 2 && b.dim() == 1 &&
                  x.size(-1) == W.size(0) && b.size(0) == W.size(1);
  if (!ok) {
    throw ValueError(fmt::format(
        "linear: expected x (B, I), W (I, O) and b (O), got x {}, W {}, b {}. W is (in, out) "
        "here, the transpose of torch::nn::Linear's weight",
        shape_of(x), shape_of(W), shape_of(b)));
  }
}

ClassifierOutput classifier_forward(const torch::Tensor& x, const torch::Tensor& W,
                                    const torch::Tensor& b) {
  torch::Tensor logits = linear(x, W, b);  // (B, O)
  // Qualified: argument-dependent lookup would also find at::softmax.
  torch::Tensor probs = tensors::softmax(logits, /*dim=*/-1);  // (B, O), over the classes
  return {std::move(logits), std::move(probs)};
}

}  // namespace g2c::tensors
