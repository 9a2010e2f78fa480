#include <fmt/format.h>

#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/embeddings/rotary.h"
#include "g2c/pretrained/grouped_query_attention.h"
#include "g2c/pretrained/internal.h"

namespace g2c::pretrained {

using g2c::embeddings::RotaryEmbeddingImpl;

torch::Tensor causal_mask_from(std::int64_t start, std::int64_t seq_len, torch::Device device) {
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
  const auto query_positions =
      torch::arange(start, start + seq_len, options).unsqueeze(1);                  // (T, 1)
  const auto key_positions = torch::arange(start + seq_len, options).unsqueeze(0);  // (1, S)
  return key_positions > query_positions;  // (T, S): a key after the query is blocked
}

GroupedQueryAttentionImpl::GroupedQueryAttentionImpl(const GroupedQueryAttentionOptions& options_)
    : options(options_) {
  const auto d_model = options.embedding_dim(), h = options.num_heads(), g = options.num_kv_heads();
  if (d_model <= 0 || h <= 0 || g <= 0 || d_model % h != 0 || h % g != 0 ||
      (d_model / h) % 2 != 0 || options.max_seq_len() <= 0 || !(options.rope_base() > 0.0)) {
    throw ValueError(fmt::format(
        "GroupedQueryAttention needs embedding_dim divisible by num_heads, num_heads divisible by "
        "num_kv_heads, an even head_dim, max_seq_len > 0 and rope_base > 0; got embedding_dim={}, "
        "num_heads={}, num_kv_heads={}, max_seq_len={}, rope_base={}",
        d_model, h, g, options.max_seq_len(), options.rope_base()));
  }
  head_dim = d_model / h;
  Wq = register_parameter("Wq", internal::linear_weight(d_model, h * head_dim));  // (D, H·d)
  Wk = register_parameter("Wk", internal::linear_weight(d_model, g * head_dim));  // (D, G·d)
  Wv = register_parameter("Wv", internal::linear_weight(d_model, g * head_dim));  // (D, G·d)
  Wo = register_parameter("Wo", internal::linear_weight(h * head_dim, d_model));  // (H·d, D)
  // Module 05's tables, over one head's d dims: every head rotates its own vector alike. A model
  // being loaded (internal::SkipInitialization) shares one pair among its blocks instead.
  if (internal::SkipInitialization::active()) {
    cos = register_buffer("cos", torch::empty({options.max_seq_len(), head_dim}));  // (M, d)
    sin = register_buffer("sin", torch::empty({options.max_seq_len(), head_dim}));
    return;
  }
  auto [cos_table, sin_table] =
      RotaryEmbeddingImpl::build_cos_sin(options.max_seq_len(), head_dim, options.rope_base());
  cos = register_buffer("cos", cos_table);  // (M, d)
  sin = register_buffer("sin", sin_table);  // (M, d)
}

void GroupedQueryAttentionImpl::share_rotary_tables(const torch::Tensor& cos_table,
                                                    const torch::Tensor& sin_table) {
  if (!cos_table.defined() || !sin_table.defined() || cos_table.sizes() != cos.sizes() ||
      sin_table.sizes() != sin.sizes()) {
    throw ValueError(fmt::format("share_rotary_tables: expected two ({}, {}) tables",
                                 options.max_seq_len(), head_dim));
  }
  // The registered buffers take the shared storage: no copy, and to(device) still moves them.
  cos.set_data(cos_table);
  sin.set_data(sin_table);
}

torch::Tensor GroupedQueryAttentionImpl::rotate(const torch::Tensor& x, std::int64_t start) const {
  const auto t = x.size(-2);
  const auto c = cos.narrow(0, start, t).to(x.scalar_type());  // (T, d), broadcast over (B, H)
  const auto s = sin.narrow(0, start, t).to(x.scalar_type());  // (T, d)
  return x * c + RotaryEmbeddingImpl::rotate_half(x) * s;      // module 05's rotation at start..
}

torch::Tensor GroupedQueryAttentionImpl::forward(const torch::Tensor& x) {
  return attend(x, nullptr);
}

torch::Tensor GroupedQueryAttentionImpl::forward(const torch::Tensor& x,
                                                 g2c::attention::LayerKVCache& cache) {
  return attend(x, &cache);
}

torch::Tensor GroupedQueryAttentionImpl::attend(const torch::Tensor& x,
                                                g2c::attention::LayerKVCache* cache) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != options.embedding_dim()) {
    throw ValueError(fmt::format(
        "GroupedQueryAttention(embedding_dim={}) expects x of shape (B, T, D={}), got {}",
        options.embedding_dim(), options.embedding_dim(),
        x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
  const auto b = x.size(0), t = x.size(1);
  const auto h = options.num_heads(), g = options.num_kv_heads(), d = head_dim;
  const auto start = cache != nullptr ? cache->length() : 0;
  if (start + t > options.max_seq_len()) {
    throw ValueError(fmt::format(
        "GroupedQueryAttention: positions {}..{} do not fit the rotary tables' {} positions "
        "(max_seq_len); start a new cache or shorten the input",
        start, start + t - 1, options.max_seq_len()));
  }
  // x @ W, or the same product from the packed blocks on the fast path.
  const auto project = [this](const torch::Tensor& in, const torch::Tensor& dense,
                              PackedWeight PackedProjections::*member) {
    return packed ? ((*packed).*member).matmul(in) : in.matmul(dense);
  };
  auto q = project(x, Wq, &PackedProjections::q).view({b, t, h, d}).transpose(1, 2);  // (B,H,T,d)
  auto k = project(x, Wk, &PackedProjections::k).view({b, t, g, d}).transpose(1, 2);  // (B,G,T,d)
  auto v = project(x, Wv, &PackedProjections::v).view({b, t, g, d}).transpose(1, 2);  // (B,G,T,d)
  q = rotate(q, start);
  k = rotate(k, start);  // cached rotated: a key's position never changes
  if (cache != nullptr) {
    cache->append(k, v);
    k = cache->k;  // (B, G, S, d)
    v = cache->v;
  }
  const auto n_rep = h / g;
  k = repeat_kv(k, n_rep);  // (B, H, S, d)
  v = repeat_kv(v, n_rep);
  // One new position sees every cached key: no mask. Several (a prompt) see up to their own.
  const auto mask = t > 1 ? causal_mask_from(start, t, x.device()) : torch::Tensor();
  const auto out = g2c::attention::scaled_dot_product_attention(q, k, v, mask).first;  // (B,H,T,d)
  return project(out.transpose(1, 2).reshape({b, t, h * d}), Wo, &PackedProjections::o);  // (B,T,D)
}

void GroupedQueryAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::pretrained::GroupedQueryAttention(embedding_dim=" << options.embedding_dim()
         << ", num_heads=" << options.num_heads() << ", num_kv_heads=" << options.num_kv_heads()
         << ", head_dim=" << head_dim << ", rope_base=" << options.rope_base() << ")";
}

}  // namespace g2c::pretrained
