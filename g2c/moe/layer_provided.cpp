// Beyond module moe, implemented for you: the mixture's construction and its parameter count.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/moe/layer.h"

namespace g2c::moe {

MoEFeedForwardImpl::MoEFeedForwardImpl(std::int64_t embedding_dim_, std::int64_t num_experts_,
                                       std::int64_t top_k_, std::int64_t hidden_dim_)
    : embedding_dim(embedding_dim_),
      num_experts(num_experts_),
      top_k(top_k_),
      hidden_dim(hidden_dim_ == 0 ? 4 * embedding_dim_ : hidden_dim_) {
  if (hidden_dim < 1) {
    throw ValueError(
        fmt::format("MoEFeedForward needs hidden_dim >= 1 (0 for 4·D), got {}", hidden_dim_));
  }
  // The router checks E and k before any expert is built: a bad top_k costs nothing.
  Router checked(embedding_dim, num_experts, top_k);
  auto list = register_module("experts", torch::nn::ModuleList());
  for (std::int64_t e = 0; e < num_experts; ++e) {
    g2c::transformer::FeedForward expert(embedding_dim, hidden_dim);
    list->push_back(expert);
    experts.push_back(expert);
  }
  router = register_module("router", checked);
}

std::int64_t MoEFeedForwardImpl::expert_parameter_count() const {
  return 2 * embedding_dim * hidden_dim + hidden_dim + embedding_dim;  // fc1 W, b; fc2 W, b
}

void MoEFeedForwardImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::moe::MoEFeedForward(embedding_dim=" << embedding_dim
         << ", num_experts=" << num_experts << ", top_k=" << top_k << ", hidden_dim=" << hidden_dim
         << ")";
}

}  // namespace g2c::moe
