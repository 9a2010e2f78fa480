#include <fmt/format.h>

#include "g2c/attention/scaled_dot_product.h"
#include "g2c/attention/self_attention.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

SelfAttentionImpl::SelfAttentionImpl(const SelfAttentionOptions& options_)
    : options(options_), embedding_dim(options_.embedding_dim()), causal(options_.causal()) {
  if (embedding_dim <= 0) {
    throw ValueError(fmt::format("SelfAttention needs embedding_dim > 0, got {}", embedding_dim));
  }
  reset();
}

void SelfAttentionImpl::reset() {
  register_layer("q_proj", q_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("k_proj", k_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("v_proj", v_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("out_proj", out_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
}

torch::Tensor SelfAttentionImpl::causal_mask(std::int64_t seq_len, torch::Device device) {
  return g2c::attention::causal_mask(seq_len, device);
}

void SelfAttentionImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(fmt::format(
        "SelfAttention(embedding_dim={}) expects x of shape (B, T, D={}), got {}", embedding_dim,
        embedding_dim, x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
}

void SelfAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::attention::SelfAttention(embedding_dim=" << embedding_dim
         << ", causal=" << (causal ? "true" : "false") << ")";
}

}  // namespace g2c::attention
