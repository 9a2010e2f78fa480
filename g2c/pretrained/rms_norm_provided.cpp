#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/pretrained/rms_norm.h"

namespace g2c::pretrained {

RMSNormImpl::RMSNormImpl(const RMSNormOptions& options_) : options(options_) {
  if (options.embedding_dim() <= 0 || !(options.eps() >= 0.0)) {
    throw ValueError(fmt::format("RMSNorm needs embedding_dim > 0 and eps >= 0, got {} and {}",
                                 options.embedding_dim(), options.eps()));
  }
  weight = register_parameter("weight", torch::ones({options.embedding_dim()}));  // (D)
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != options.embedding_dim()) {
    throw ValueError(fmt::format("RMSNorm(embedding_dim={}) expects x of shape (..., D={}), got {}",
                                 options.embedding_dim(), options.embedding_dim(),
                                 x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
  return rms_norm(x, weight, options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::pretrained::RMSNorm(embedding_dim=" << options.embedding_dim()
         << ", eps=" << options.eps() << ")";
}

}  // namespace g2c::pretrained
