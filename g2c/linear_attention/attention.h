// Beyond module linear_attention — attention without the softmax, computed two ways.
//
// Dimension legend: B batch, T positions, D embedding_dim, H num_heads, d head_dim = D / H.
// Module 08's attention mixes the values with softmax(q kᵀ / √d): every output must visit every
// past key. Replace the exponential by a positive feature map φ (elu(x) + 1) and drop the softmax,
// and the sum over the past regroups — (φ(q) φ(k)ᵀ) v = φ(q) (φ(k)ᵀ v) — into a running state per
// head, with a learned decay γ_h ∈ (0, 1) that lets old tokens fade:
//   S_t = γ · S_{t-1} + φ(k_t) v_tᵀ            (d, d)
//   z_t = γ · z_{t-1} + φ(k_t)                  (d)       the normaliser
//   out_t = (φ(q_t) · S_t) / (φ(q_t) · z_t + EPS)
// The same numbers come out of
//   forward  the parallel form: all T positions at once, scores φ(q) φ(k)ᵀ (B, H, T, T) times the
//            decay mask γ^(t−i) (i ≤ t, 0 above the diagonal), rows normalised by their sums. It
//            builds (T, T) matrices on purpose: the readable reference, not a training kernel.
//   step     the recurrent form: one token, the state (S, z) carried from the last one — the
//            whole "KV cache" is H matrices of d × d, whatever the history's length.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "g2c/core/torch.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::linear_attention {

/// Keeps the normaliser away from zero. φ is positive, so the denominators are too; EPS matters
/// only for a near-empty state.
inline constexpr double EPS = 1e-6;

/// sigmoid(4.6) ≈ 0.99: a fresh layer forgets slowly, close to the plain running sum.
inline constexpr double kGammaLogitInit = 4.6;

/// φ(x) = elu(x) + 1, elementwise: positive and increasing, the stand-in for softmax's exponential
/// that factorises.
torch::Tensor feature_map(const torch::Tensor& x);

/// The recurrent state of one layer: S (B, H, d, d) and z (B, H, d).
struct LinearAttentionState {
  torch::Tensor S;
  torch::Tensor z;
};

/// What step returns: out (B, D) and the state that now includes this token.
struct LinearAttentionStep {
  torch::Tensor out;
  LinearAttentionState state;
};

class LinearAttentionImpl : public g2c::nn::Module {
 public:
  /// Registers q_proj, k_proj, v_proj, out_proj (each module 08's Linear(D, D)) then gamma_logit
  /// (H), every entry kGammaLogitInit: module 08's attention's parameters plus H. ValueError when
  /// num_heads does not divide embedding_dim, or for a size below 1.
  LinearAttentionImpl(std::int64_t embedding_dim, std::int64_t num_heads);

  /// x (B, T, D) -> (B, T, D): the parallel form (above). ValueError unless x is (B, T, D).
  torch::Tensor forward(const torch::Tensor& x) override;

  /// x_t (B, D), the state after the previous tokens (nullopt: init_state(B)) ->
  /// {out (B, D), the state after this token}. Decay and write the token into the state first,
  /// then read it: a token sees itself, as the parallel form's diagonal (γ⁰ = 1) lets it.
  LinearAttentionStep step(const torch::Tensor& x_t,
                           const std::optional<LinearAttentionState>& state = std::nullopt);

  /// γ = sigmoid(gamma_logit): (H), each in (0, 1).
  torch::Tensor decay() const;

  /// An empty state on `device`: S zeros (B, H, d, d), z zeros (B, H, d), in the projections'
  /// dtype.
  LinearAttentionState init_state(std::int64_t batch_size,
                                  const torch::Device& device = torch::kCPU) const;

  /// (B, T, D) -> (B, H, T, d): head h reads columns h·d … (h+1)·d − 1, as module 08 splits them.
  torch::Tensor split_heads(const torch::Tensor& x) const;
  /// (B, H, T, d) -> (B, T, D), the inverse.
  torch::Tensor merge_heads(const torch::Tensor& x) const;

  /// ValueError unless x is (B, T, D) with this layer's D.
  void check_input(const torch::Tensor& x) const;
  /// ValueError unless x_t is (B, D) and the state, when given, is (B, H, d, d) and (B, H, d).
  void check_step(const torch::Tensor& x_t, const std::optional<LinearAttentionState>& state) const;

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  g2c::nn::Linear q_proj{nullptr};
  g2c::nn::Linear k_proj{nullptr};
  g2c::nn::Linear v_proj{nullptr};
  g2c::nn::Linear out_proj{nullptr};
  torch::Tensor gamma_logit;  // (H)
};
TORCH_MODULE(LinearAttention);

}  // namespace g2c::linear_attention
