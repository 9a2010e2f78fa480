// Module 06 — your work: the MLP language model's forward pass.
#include "g2c/lm/mlp.h"

#include "g2c/core/errors.h"

namespace g2c::lm {

torch::Tensor MLPLanguageModelImpl::forward(const torch::Tensor& context) {
  // TODO: ids = as_context(context) (B, N); embed (B, N, D); flatten to (B, N*D); tanh(hidden(.))
  // (B, H); output(.) gives the logits (B, V).
  throw g2c::todo("MLPLanguageModel::forward", "g2c/lm/mlp.cpp", "06");
}

}  // namespace g2c::lm
