// Module 13b — reference solution for g2c/lora/layer.cpp.
#include "g2c/lora/layer.h"

namespace g2c::lora {

torch::Tensor LoRALinearImpl::forward(const torch::Tensor& x) {
  const auto y = LinearImpl::forward(x);  // (…, out): the frozen layer, x W + b
  if (merged) return y;                   // the delta is already inside W
  // (x A) first: (…, in) @ (in, r) -> (…, r) @ (r, out) -> (…, out), never the (in, out) A B.
  const auto delta = torch::matmul(torch::matmul(x, lora_A), lora_B);
  return y + scaling * delta;
}

void LoRALinearImpl::merge() {
  if (merged) return;
  torch::NoGradGuard no_grad;                      // W is a parameter: edit its values, not a graph
  W.add_(torch::matmul(lora_A, lora_B), scaling);  // (in, r) @ (r, out) -> (in, out), W's shape
  merged = true;
}

void LoRALinearImpl::unmerge() {
  if (!merged) return;
  torch::NoGradGuard no_grad;
  W.sub_(torch::matmul(lora_A, lora_B), scaling);  // (in, out)
  merged = false;
}

}  // namespace g2c::lora
