// Module 16 — reference solution for g2c/pretrained/swiglu.cpp.
#include "g2c/pretrained/swiglu.h"

namespace g2c::pretrained {

torch::Tensor SwiGLUImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto gate = torch::silu(x.matmul(W_gate));  // (…, F), z · σ(z)
  const auto up = x.matmul(W_up);                   // (…, F)
  return (gate * up).matmul(W_down);                // (…, D)
}

}  // namespace g2c::pretrained
