// Module 06 — reference solution for g2c/lm/mlp.cpp.
#include "g2c/lm/mlp.h"

namespace g2c::lm {

torch::Tensor MLPLanguageModelImpl::forward(const torch::Tensor& context) {
  const auto ids = as_context(context);      // (B, N)
  const auto vectors = embedding(ids);       // (B, N, D)
  const auto flat = vectors.flatten(1);      // (B, N*D): token i in slots i*D..i*D+D
  return output(torch::tanh(hidden(flat)));  // (B, H) -> (B, V)
}

}  // namespace g2c::lm
