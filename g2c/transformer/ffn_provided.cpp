#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/transformer/ffn.h"

namespace g2c::transformer {

FeedForwardImpl::FeedForwardImpl(const FeedForwardOptions& options_)
    : options(options_),
      embedding_dim(options_.embedding_dim()),
      hidden_dim(options_.hidden_dim() == 0 ? 4 * options_.embedding_dim()
                                            : options_.hidden_dim()) {
  if (embedding_dim <= 0 || hidden_dim <= 0) {
    throw ValueError(fmt::format(
        "FeedForward needs embedding_dim > 0 and hidden_dim > 0 (0 for 4·D), got {} and {}",
        embedding_dim, options_.hidden_dim()));
  }
  reset();
}

void FeedForwardImpl::reset() {
  register_layer("fc1", fc1, g2c::nn::Linear(embedding_dim, hidden_dim));
  register_layer("fc2", fc2, g2c::nn::Linear(hidden_dim, embedding_dim));
}

void FeedForwardImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != embedding_dim) {
    throw ValueError(fmt::format(
        "FeedForward(embedding_dim={}) expects x of shape (..., D={}), got {}", embedding_dim,
        embedding_dim, x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
}

void FeedForwardImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::transformer::FeedForward(embedding_dim=" << embedding_dim
         << ", hidden_dim=" << hidden_dim << ")";
}

}  // namespace g2c::transformer
