#include <fmt/format.h>

#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

MultiHeadAttentionImpl::MultiHeadAttentionImpl(const MultiHeadAttentionOptions& options_)
    : options(options_),
      embedding_dim(options_.embedding_dim()),
      num_heads(options_.num_heads()),
      head_dim(0),
      causal(options_.causal()) {
  if (embedding_dim <= 0 || num_heads <= 0) {
    throw ValueError(
        fmt::format("MultiHeadAttention needs embedding_dim > 0 and num_heads > 0, got {} and {}",
                    embedding_dim, num_heads));
  }
  if (embedding_dim % num_heads != 0) {
    throw ValueError(fmt::format("embedding_dim (D={}) must be divisible by num_heads (H={})",
                                 embedding_dim, num_heads));
  }
  head_dim = embedding_dim / num_heads;
  reset();
}

void MultiHeadAttentionImpl::reset() {
  register_layer("q_proj", q_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("k_proj", k_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("v_proj", v_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
  register_layer("out_proj", out_proj, g2c::nn::Linear(embedding_dim, embedding_dim));
}

torch::Tensor MultiHeadAttentionImpl::causal_mask(std::int64_t seq_len, torch::Device device) {
  return g2c::attention::causal_mask(seq_len, device);
}

void MultiHeadAttentionImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(
        fmt::format("MultiHeadAttention(embedding_dim={}) expects x of shape (B, T, D={}), got {}",
                    embedding_dim, embedding_dim,
                    x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
}

torch::Tensor MultiHeadAttentionImpl::forward_cached(const torch::Tensor& x, LayerKVCache& cache) {
  if (!causal) {
    throw ValueError(
        "forward_cached needs a causal layer: a non-causal layer lets earlier tokens see later "
        "ones, "
        "which a cache of past keys and values cannot reproduce. Construct it with causal = true.");
  }
  check_input(x);
  if (x.size(1) != 1) {
    throw ValueError(
        fmt::format("forward_cached takes exactly one new token, x (B, T=1, D); got {}",
                    describe_shape(x, {"B", "T", "D"})));
  }
  const std::int64_t batch = x.size(0);
  auto split = [&](const torch::Tensor& t) {  // (B, 1, D) -> (B, H, 1, d)
    return t.view({batch, 1, num_heads, head_dim}).transpose(1, 2);
  };
  cache.append(split(k_proj(x)), split(v_proj(x)));
  // The cache holds only this token and the past, so no mask is needed.
  const auto [mixed, weights] = g2c::attention::scaled_dot_product_attention(
      split(q_proj(x)), cache.k, cache.v);  // (B, H, 1, d)
  return out_proj(mixed.transpose(1, 2).contiguous().view({batch, 1, embedding_dim}));  // (B, 1, D)
}

void MultiHeadAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::attention::MultiHeadAttention(embedding_dim=" << embedding_dim
         << ", num_heads=" << num_heads << ", causal=" << (causal ? "true" : "false") << ")";
}

}  // namespace g2c::attention
