#include <utility>

#include <fmt/format.h>

#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

namespace {

/// ValueError unless k and v are both defined, 4-D (B, H, T, d) and of equal shape.
void check_kv_pair(const torch::Tensor& k, const torch::Tensor& v) {
  if (!k.defined() || !v.defined() || k.dim() != 4 || k.sizes() != v.sizes()) {
    throw ValueError(fmt::format("LayerKVCache: k and v must both be (B, H, T, d); got k {}, v {}",
                                 k.defined() ? describe_shape(k) : "undefined",
                                 v.defined() ? describe_shape(v) : "undefined"));
  }
  if (k.device() != v.device() || k.scalar_type() != v.scalar_type()) {
    throw ValueError(
        fmt::format("LayerKVCache: k and v must share device and dtype; got k {} {}, "
                    "v {} {}",
                    k.device().str(), c10::toString(k.scalar_type()), v.device().str(),
                    c10::toString(v.scalar_type())));
  }
}

}  // namespace

LayerKVCache::LayerKVCache(torch::Tensor k_, torch::Tensor v_)
    : k(std::move(k_)), v(std::move(v_)) {
  if (k.defined() || v.defined()) check_kv_pair(k, v);
}

LayerKVCache& LayerKVCache::append(const torch::Tensor& k_new, const torch::Tensor& v_new) {
  check_kv_pair(k_new, v_new);
  if (k.defined() != v.defined()) {
    throw ValueError(fmt::format(
        "LayerKVCache holds k {} but v {}: set both or neither (clear() empties the cache)",
        k.defined() ? describe_shape(k) : "undefined",
        v.defined() ? describe_shape(v) : "undefined"));
  }
  if (!k.defined()) {
    k = k_new;
    v = v_new;
    return *this;
  }
  const bool same_layout =
      k_new.size(0) == k.size(0) && k_new.size(1) == k.size(1) && k_new.size(3) == k.size(3);
  if (!same_layout) {
    throw ValueError(fmt::format("LayerKVCache holds {}; cannot append {} (B, H and d must match)",
                                 describe_shape(k, {"B", "H", "T", "d"}),
                                 describe_shape(k_new, {"B", "H", "T", "d"})));
  }
  if (k_new.device() != k.device() || k_new.scalar_type() != k.scalar_type()) {
    throw ValueError(fmt::format("LayerKVCache holds {} {} tensors; cannot append {} {}",
                                 k.device().str(), c10::toString(k.scalar_type()),
                                 k_new.device().str(), c10::toString(k_new.scalar_type())));
  }
  k = torch::cat({k, k_new}, /*dim=*/2);  // (B, H, T + T_new, d)
  v = torch::cat({v, v_new}, /*dim=*/2);
  return *this;
}

void LayerKVCache::clear() {
  k = torch::Tensor();
  v = torch::Tensor();
}

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
  q_proj = register_module("q_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  k_proj = register_module("k_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  v_proj = register_module("v_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  out_proj = register_module("out_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
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
