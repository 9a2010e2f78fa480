#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/pretrained/internal.h"
#include "g2c/pretrained/swiglu.h"

namespace g2c::pretrained {

SwiGLUImpl::SwiGLUImpl(const SwiGLUOptions& options_) : options(options_) {
  const auto d = options.embedding_dim(), f = options.hidden_dim();
  if (d <= 0 || f <= 0) {
    throw ValueError(
        fmt::format("SwiGLU needs embedding_dim > 0 and hidden_dim > 0, got {} and {}", d, f));
  }
  W_gate = register_parameter("W_gate", internal::linear_weight(d, f));  // (D, F)
  W_up = register_parameter("W_up", internal::linear_weight(d, f));      // (D, F)
  W_down = register_parameter("W_down", internal::linear_weight(f, d));  // (F, D)
}

void SwiGLUImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != options.embedding_dim()) {
    throw ValueError(fmt::format("SwiGLU(embedding_dim={}) expects x of shape (..., D={}), got {}",
                                 options.embedding_dim(), options.embedding_dim(),
                                 x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
}

torch::Tensor SwiGLUImpl::forward_packed(const torch::Tensor& x) {
  check_input(x);
  if (!packed) throw ValueError("SwiGLU::forward_packed: this SwiGLU holds no packed weights");
  // Your forward's formula, each x @ W computed from the file's blocks.
  const auto gate = torch::silu(packed->gate.matmul(x));  // (…, F)
  const auto up = packed->up.matmul(x);                   // (…, F)
  return packed->down.matmul(gate * up);                  // (…, D)
}

void SwiGLUImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::pretrained::SwiGLU(embedding_dim=" << options.embedding_dim()
         << ", hidden_dim=" << options.hidden_dim() << ")";
}

}  // namespace g2c::pretrained
