// Module 16 — your work: the SwiGLU feed-forward.
#include "g2c/pretrained/swiglu.h"

#include "g2c/core/errors.h"

namespace g2c::pretrained {

torch::Tensor SwiGLUImpl::forward(const torch::Tensor& x) {
  // TODO: Project x twice, gate one projection with the other, project back:
  //   y = (silu(x @ W_gate) ⊙ (x @ W_up)) @ W_down,   silu(z) = z · σ(z),
  // silu on the gate branch only (the trained weights expect it there), ⊙ elementwise.
  // (…, D) -> (…, F) -> (…, D). Check x first with check_input.
  // Operations: matmul, torch::silu, an elementwise product.
  // Hints, one step at a time: scripts/hint.sh 16 SwiGLU::forward
  throw g2c::todo("SwiGLU::forward", "g2c/pretrained/swiglu.cpp", "16");
}

}  // namespace g2c::pretrained
