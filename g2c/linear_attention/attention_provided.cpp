// Beyond module linear_attention, implemented for you: the feature map, the layer's construction,
// its decay, its empty state, the head reshapes and the checks.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/linear_attention/attention.h"

namespace g2c::linear_attention {

torch::Tensor feature_map(const torch::Tensor& x) {
  return torch::elu(x) + 1.0;
}

LinearAttentionImpl::LinearAttentionImpl(std::int64_t embedding_dim_, std::int64_t num_heads_)
    : embedding_dim(embedding_dim_), num_heads(num_heads_) {
  if (embedding_dim < 1 || num_heads < 1) {
    throw ValueError(
        fmt::format("LinearAttention needs embedding_dim >= 1 and num_heads >= 1, got "
                    "{} and {}",
                    embedding_dim, num_heads));
  }
  if (embedding_dim % num_heads != 0) {
    throw ValueError(fmt::format(
        "LinearAttention: num_heads {} does not divide embedding_dim {}: every head needs the "
        "same head_dim = D / H",
        num_heads, embedding_dim));
  }
  head_dim = embedding_dim / num_heads;
  q_proj = register_module("q_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  k_proj = register_module("k_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  v_proj = register_module("v_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  out_proj = register_module("out_proj", g2c::nn::Linear(embedding_dim, embedding_dim));
  gamma_logit = register_parameter("gamma_logit", torch::full({num_heads}, kGammaLogitInit));
}

torch::Tensor LinearAttentionImpl::decay() const {
  return torch::sigmoid(gamma_logit);
}

LinearAttentionState LinearAttentionImpl::init_state(std::int64_t batch_size,
                                                     const torch::Device& device) const {
  if (batch_size < 1) {
    throw ValueError(fmt::format("init_state needs batch_size >= 1, got {}", batch_size));
  }
  const auto options = q_proj->W.options().device(device);
  return {torch::zeros({batch_size, num_heads, head_dim, head_dim}, options),
          torch::zeros({batch_size, num_heads, head_dim}, options)};
}

torch::Tensor LinearAttentionImpl::split_heads(const torch::Tensor& x) const {
  return x.reshape({x.size(0), x.size(1), num_heads, head_dim}).permute({0, 2, 1, 3});
}

torch::Tensor LinearAttentionImpl::merge_heads(const torch::Tensor& x) const {
  return x.permute({0, 2, 1, 3}).reshape({x.size(0), x.size(2), embedding_dim});
}

void LinearAttentionImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 3 || x.size(2) != embedding_dim) {
    throw ValueError(
        fmt::format("LinearAttention expects x of shape (B, T, D={}); got {}", embedding_dim,
                    x.defined() ? describe_shape(x, {"B", "T", "D"}) : "an undefined tensor"));
  }
}

void LinearAttentionImpl::check_step(const torch::Tensor& x_t,
                                     const std::optional<LinearAttentionState>& state) const {
  if (!x_t.defined() || x_t.dim() != 2 || x_t.size(1) != embedding_dim) {
    throw ValueError(fmt::format(
        "LinearAttention::step expects one token per sequence, x_t of shape (B, D={}); got {}",
        embedding_dim, x_t.defined() ? describe_shape(x_t, {"B", "D"}) : "an undefined tensor"));
  }
  if (!state) return;
  const std::int64_t batch = x_t.size(0);
  const std::vector<std::int64_t> s_shape{batch, num_heads, head_dim, head_dim};
  const std::vector<std::int64_t> z_shape{batch, num_heads, head_dim};
  if (!state->S.defined() || !state->z.defined() || state->S.sizes() != s_shape ||
      state->z.sizes() != z_shape) {
    throw ValueError(fmt::format(
        "LinearAttention::step's state must be S (B={0}, H={1}, d={2}, d={2}) and z (B={0}, "
        "H={1}, d={2}); got S {3} and z {4}: start from init_state(B) or pass no state",
        batch, num_heads, head_dim, state->S.defined() ? describe_shape(state->S) : "undefined",
        state->z.defined() ? describe_shape(state->z) : "undefined"));
  }
}

void LinearAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::linear_attention::LinearAttention(embedding_dim=" << embedding_dim
         << ", num_heads=" << num_heads << ", head_dim=" << head_dim << ")";
}

}  // namespace g2c::linear_attention
