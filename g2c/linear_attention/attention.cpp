// Beyond module linear_attention — your work: the parallel form and the recurrent form.
#include "g2c/linear_attention/attention.h"
#include "g2c/core/errors.h"

namespace g2c::linear_attention {

torch::Tensor LinearAttentionImpl::forward(const torch::Tensor& x) {
  // TODO: every position at once. x (B, T, D) (check_input(x) first).
  //   q = φ(split_heads(q_proj(x))), k = φ(split_heads(k_proj(x)))   (B, H, T, d); φ = feature_map
  //   v = split_heads(v_proj(x))                                      (B, H, T, d), no φ
  //   scores = q kᵀ                                                   (B, H, T, T)
  //   mask[h, t, i] = γ_h^(t − i) for i <= t, 0 for i > t (γ = decay()) (H, T, T): the diagonal 1
  //   weighted = scores · mask                                        (B, H, T, T)
  //   out = (weighted v) / (weighted's row sums + EPS)                (B, H, T, d)
  // Return out_proj(merge_heads(out)): (B, T, D).
  // Hints, one step at a time: scripts/hint.sh linear_attention LinearAttention::forward
  throw g2c::todo("LinearAttention::forward", "g2c/linear_attention/attention.cpp",
                  "linear_attention");
}

LinearAttentionStep LinearAttentionImpl::step(const torch::Tensor& x_t,
                                              const std::optional<LinearAttentionState>& state) {
  // TODO: one token. x_t (B, D) (check_step(x_t, state) first); the state defaults to
  // init_state(B, x_t.device()).
  //   q = φ(q_proj(x_t)), k = φ(k_proj(x_t)), v = v_proj(x_t), each viewed as (B, H, d)
  //   write first, with γ = decay() (H):
  //     S' = γ · S + k vᵀ       (B, H, d, d): the outer product of each head's k and v
  //     z' = γ · z + k          (B, H, d)
  //   then read: out = (q · S') / (q · z' + EPS)   (B, H, d) / (B, H, 1)
  // Return {out_proj(out as (B, D)), {S', z'}}. Writing before reading lets the token see itself.
  // Hints, one step at a time: scripts/hint.sh linear_attention LinearAttention::step
  throw g2c::todo("LinearAttention::step", "g2c/linear_attention/attention.cpp",
                  "linear_attention");
}

}  // namespace g2c::linear_attention
