// Reference solution for g2c/linear_attention/attention.cpp: the parallel and recurrent forms.
#include "g2c/linear_attention/attention.h"

namespace g2c::linear_attention {

torch::Tensor LinearAttentionImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const std::int64_t length = x.size(1);
  const auto q = feature_map(split_heads(q_proj(x)));         // (B, H, T, d)
  const auto k = feature_map(split_heads(k_proj(x)));         // (B, H, T, d)
  const auto v = split_heads(v_proj(x));                      // (B, H, T, d)
  const auto scores = torch::matmul(q, k.transpose(-2, -1));  // (B, H, T, T)

  // The recurrence unrolled: position t sees position i's write decayed once per step between.
  const auto positions = torch::arange(length, x.options().dtype(torch::kLong));
  const auto distance = (positions.unsqueeze(1) - positions.unsqueeze(0)).to(x.scalar_type());
  const auto causal = distance >= 0;                   // (T, T)
  const auto gamma = decay().view({num_heads, 1, 1});  // (H, 1, 1)
  const auto mask = torch::where(causal, torch::pow(gamma, distance.clamp_min(0)),
                                 torch::zeros({}, x.options()));  // (H, T, T)

  const auto weighted = scores * mask;  // (B, H, T, T)
  const auto out = torch::matmul(weighted, v) / (weighted.sum(-1, /*keepdim=*/true) + EPS);
  return out_proj(merge_heads(out));  // (B, T, D)
}

LinearAttentionStep LinearAttentionImpl::step(const torch::Tensor& x_t,
                                              const std::optional<LinearAttentionState>& state) {
  check_step(x_t, state);
  const std::int64_t batch = x_t.size(0);
  const auto [S, z] = state ? *state : init_state(batch, x_t.device());
  const auto q = feature_map(q_proj(x_t).view({batch, num_heads, head_dim}));  // (B, H, d)
  const auto k = feature_map(k_proj(x_t).view({batch, num_heads, head_dim}));  // (B, H, d)
  const auto v = v_proj(x_t).view({batch, num_heads, head_dim});               // (B, H, d)

  // Write, then read: the token is in the state its own query reads.
  const auto gamma = decay().view({1, num_heads, 1});                              // (1, H, 1)
  const auto S_new = gamma.unsqueeze(-1) * S + k.unsqueeze(-1) * v.unsqueeze(-2);  // (B, H, d, d)
  const auto z_new = gamma * z + k;                                                // (B, H, d)

  const auto numerator = torch::matmul(q.unsqueeze(-2), S_new).squeeze(-2);  // (B, H, d)
  const auto denominator = (q * z_new).sum(-1, /*keepdim=*/true) + EPS;      // (B, H, 1)
  const auto out = numerator / denominator;
  return {out_proj(out.reshape({batch, embedding_dim})), {S_new, z_new}};
}

}  // namespace g2c::linear_attention
