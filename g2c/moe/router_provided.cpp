// Beyond module moe, implemented for you: the router's construction and checks.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/moe/router.h"

namespace g2c::moe {

RouterImpl::RouterImpl(std::int64_t embedding_dim_, std::int64_t num_experts_, std::int64_t top_k_)
    : embedding_dim(embedding_dim_), num_experts(num_experts_), top_k(top_k_) {
  if (embedding_dim < 1) {
    throw ValueError(fmt::format("Router needs embedding_dim >= 1, got {}", embedding_dim));
  }
  if (num_experts < 1) {
    throw ValueError(fmt::format("Router needs num_experts >= 1, got {}", num_experts));
  }
  if (top_k < 1 || top_k > num_experts) {
    throw ValueError(fmt::format(
        "Router's top_k must lie in [1, num_experts] = [1, {}]: each token goes to top_k distinct "
        "experts; got top_k = {}",
        num_experts, top_k));
  }
  gate = register_module("gate", g2c::nn::Linear(embedding_dim, num_experts));
}

void RouterImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 2 || x.size(1) != embedding_dim) {
    throw ValueError(
        fmt::format("Router expects tokens of shape (N, D={}); got {}", embedding_dim,
                    x.defined() ? describe_shape(x, {"N", "D"}) : "an undefined tensor"));
  }
}

void RouterImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::moe::Router(embedding_dim=" << embedding_dim << ", num_experts=" << num_experts
         << ", top_k=" << top_k << ")";
}

}  // namespace g2c::moe
