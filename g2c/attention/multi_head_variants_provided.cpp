// Module 08 — the attention variants other courses teach, provided beside the lesson: a caller's
// mask (course convention or 0/1), cross-attention, dropout on the weights, and nanoGPT's packed
// QKV projection. One path, attend(), computes them all from the layer's parameters, without the
// student's forward(x) and attention_weights(x) (and without module 03's Linear::forward: these
// paths run on day one). The masked computation is scaled_dot_product_attention's, so a query
// whose every key is blocked stays finite.
//
// Dimension legend: B batch, T_q queries, T_k keys (T for self-attention), D embedding_dim,
// H num_heads, d = D / H head_dim.
#include <typeinfo>

#include <fmt/format.h>

#include "g2c/attention/masks.h"
#include "g2c/attention/multi_head.h"
#include "g2c/attention/scaled_dot_product.h"
#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"

namespace g2c::attention {

namespace {

/// y = x @ W + b for x (…, in), W (in, out), b (out): the course's Linear, on raw parameters.
torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& W, const torch::Tensor& b) {
  return torch::matmul(x, W) + b;  // (…, out)
}

/// (B, T, D) -> (B, H, T, d). The chunks of the packed projection are slices of (B, T, 3D); their
/// last dimension is still contiguous, so view can split it.
torch::Tensor split_into_heads(const torch::Tensor& t, std::int64_t num_heads,
                               std::int64_t head_dim) {
  return t.view({t.size(0), t.size(1), num_heads, head_dim}).transpose(1, 2);
}

std::string describe_x(const torch::Tensor& x, const char* name) {
  return fmt::format("{} {}", name, describe_shape(x, {"B", "T", "D"}));
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> MultiHeadAttentionImpl::pack_qkv() const {
  return {torch::cat({q_proj->W, k_proj->W, v_proj->W}, /*dim=*/1),  // (D, 3D)
          torch::cat({q_proj->b, k_proj->b, v_proj->b})};            // (3D)
}

void MultiHeadAttentionImpl::load_packed_qkv(const torch::Tensor& W, const torch::Tensor& b) {
  const auto D = embedding_dim;
  if (!W.defined() || !b.defined() || W.dim() != 2 || W.size(0) != D || W.size(1) != 3 * D ||
      b.dim() != 1 || b.size(0) != 3 * D) {
    throw ValueError(fmt::format(
        "load_packed_qkv expects W (D={}, 3D={}) and b (3D={}) (nanoGPT's c_attn.weight is the "
        "transpose of W); got W {} and b {}",
        D, 3 * D, 3 * D, W.defined() ? describe_shape(W) : "undefined",
        b.defined() ? describe_shape(b) : "undefined"));
  }
  torch::NoGradGuard no_grad;
  const auto Ws = W.split(D, /*dim=*/1), bs = b.split(D);
  q_proj->W.copy_(Ws[0]);
  k_proj->W.copy_(Ws[1]);
  v_proj->W.copy_(Ws[2]);
  q_proj->b.copy_(bs[0]);
  k_proj->b.copy_(bs[1]);
  v_proj->b.copy_(bs[2]);
}

std::pair<torch::Tensor, torch::Tensor> MultiHeadAttentionImpl::attend(
    const torch::Tensor& x_q, const torch::Tensor& x_kv, const torch::Tensor& blocked) {
  const double p = options.dropout();
  if (!(p >= 0.0 && p < 1.0)) {
    throw ValueError(fmt::format(
        "MultiHeadAttention: dropout must lie in [0, 1) (the probability of zeroing a weight); "
        "got {}",
        p));
  }
  const auto D = embedding_dim;
  // The packed path reads the projections' W and b. A Linear subclass computes something else from
  // them (module 13b's LoRALinear adds its adapter until merged): then each projection runs its
  // own forward instead, or what it adds would be silently dropped.
  bool plain = true;
  for (const auto* layer : {q_proj.get(), k_proj.get(), v_proj.get(), out_proj.get()}) {
    plain = plain && typeid(*layer) == typeid(g2c::nn::LinearImpl);
  }
  torch::Tensor q, k, v;  // each (B, T_q or T_k, D)
  if (!plain) {
    q = q_proj(x_q), k = k_proj(x_kv), v = v_proj(x_kv);
  } else if (x_q.is_same(x_kv)) {
    // Self-attention, nanoGPT's layout: one matmul, then split in three.
    const auto [W, b] = pack_qkv();                           // (D, 3D), (3D)
    const auto qkv = affine(x_q, W, b).split(D, /*dim=*/-1);  // (B, T, 3D) -> 3 x (B, T, D)
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    const auto [W, b] = pack_qkv();
    q = affine(x_q, W.narrow(1, 0, D), b.narrow(0, 0, D));                      // (B, T_q, D)
    const auto kv = affine(x_kv, W.narrow(1, D, 2 * D), b.narrow(0, D, 2 * D))  // (B, T_k, 2D)
                        .split(D, /*dim=*/-1);
    k = kv[0], v = kv[1];
  }
  const auto v_heads = split_into_heads(v, num_heads, head_dim);  // (B, H, T_k, d)
  // The mask, (B or 1, 1, T_q, T_k), broadcasts over H.
  auto [mixed, weights] =
      scaled_dot_product_attention(split_into_heads(q, num_heads, head_dim),
                                   split_into_heads(k, num_heads, head_dim), v_heads, blocked);
  // mixed (B, H, T_q, d), weights (B, H, T_q, T_k)
  if (is_training() && p > 0.0) {
    // Dropout on the weights, then mix again (the mix above used the weights before dropout).
    weights = torch::dropout(weights, p, /*train=*/true);
    mixed = torch::matmul(weights, v_heads);  // (B, H, T_q, d)
  }
  const auto merged = mixed.transpose(1, 2).contiguous().view({x_q.size(0), x_q.size(1), D});
  // (B, T_q, D), (B, H, T_q, T_k)
  return {plain ? affine(merged, out_proj->W, out_proj->b) : out_proj(merged), weights};
}

namespace {

/// The blocked mask of self-attention on x (B, T, D): the caller's, fitted, or the causal one,
/// or both combined; undefined when there is none.
torch::Tensor self_attention_mask(const MultiHeadAttentionImpl& layer, const torch::Tensor& x,
                                  const torch::Tensor& mask) {
  layer.check_input(x);
  const auto T = x.size(1);
  torch::Tensor blocked;
  if (mask.defined()) {
    blocked =
        fit_mask(mask.to(x.device()), x.size(0), T, T,
                 fmt::format("MultiHeadAttention.forward_masked({}, mask)", describe_x(x, "x")));
  }
  if (layer.causal) blocked = combine_masks(causal_mask(T, x.device()), blocked);
  return blocked;
}

/// The blocked mask of cross-attention (never causal), after checking x_q and x_kv.
torch::Tensor cross_attention_mask(const MultiHeadAttentionImpl& layer, const torch::Tensor& x_q,
                                   const torch::Tensor& x_kv, const torch::Tensor& mask) {
  const auto D = layer.embedding_dim;
  check_shape(x_q, "x_q", {"B", "T_q", "D"}, {-1, -1, D});
  const auto what =
      fmt::format("x_kv, the keys and values for x_q {},", describe_shape(x_q, {"B", "T_q", "D"}));
  check_shape(x_kv, what.c_str(), {"B", "T_k", "D"}, {x_q.size(0), -1, D});
  if (x_q.device() != x_kv.device()) {
    throw ValueError(
        fmt::format("MultiHeadAttention cross-attention: x_q is on {} and x_kv on {}; move one",
                    x_q.device().str(), x_kv.device().str()));
  }
  if (!mask.defined()) return {};
  return fit_mask(
      mask.to(x_q.device()), x_q.size(0), x_q.size(1), x_kv.size(1),
      fmt::format("MultiHeadAttention.forward_cross({}, {}, mask)",
                  describe_shape(x_q, {"B", "T_q", "D"}), describe_shape(x_kv, {"B", "T_k", "D"})));
}

}  // namespace

torch::Tensor MultiHeadAttentionImpl::forward_masked(const torch::Tensor& x,
                                                     const torch::Tensor& mask) {
  return attend(x, x, self_attention_mask(*this, x, mask)).first;  // (B, T, D)
}

torch::Tensor MultiHeadAttentionImpl::forward_cross(const torch::Tensor& x_q,
                                                    const torch::Tensor& x_kv,
                                                    const torch::Tensor& mask) {
  return attend(x_q, x_kv, cross_attention_mask(*this, x_q, x_kv, mask)).first;  // (B, T_q, D)
}

torch::Tensor MultiHeadAttentionImpl::attention_weights_masked(const torch::Tensor& x,
                                                               const torch::Tensor& mask) {
  return attend(x, x, self_attention_mask(*this, x, mask)).second;  // (B, H, T, T)
}

torch::Tensor MultiHeadAttentionImpl::attention_weights_cross(const torch::Tensor& x_q,
                                                              const torch::Tensor& x_kv,
                                                              const torch::Tensor& mask) {
  return attend(x_q, x_kv, cross_attention_mask(*this, x_q, x_kv, mask)).second;  // (B,H,T_q,T_k)
}

}  // namespace g2c::attention
