#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/transformer/layer_norm.h"

namespace g2c::transformer {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_)
    : options(options_), embedding_dim(options_.embedding_dim()), eps(options_.eps()) {
  if (embedding_dim <= 0 || !(eps > 0.0)) {
    throw ValueError(fmt::format("LayerNorm needs embedding_dim > 0 and eps > 0, got {} and {}",
                                 embedding_dim, eps));
  }
  reset();
}

void LayerNormImpl::reset() {
  gamma = register_parameter("gamma", torch::empty({embedding_dim}));  // (D)
  beta = register_parameter("beta", torch::empty({embedding_dim}));    // (D)
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  gamma.fill_(1.0);
  beta.zero_();
}

void LayerNormImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != embedding_dim) {
    throw ValueError(fmt::format(
        "LayerNorm(embedding_dim={}) expects x of shape (..., D={}), got {}", embedding_dim,
        embedding_dim, x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::LayerNorm(embedding_dim=" << embedding_dim << ", eps=" << eps << ")";
}

}  // namespace g2c::transformer
