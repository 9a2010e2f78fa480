// Beyond module moe — the mixture-of-experts feed-forward: E module 09 FeedForward experts and a
// router; each token is computed by its k chosen experts only and gets their weighted sum.
//
// Dimension legend: N tokens, D embedding_dim, E num_experts, k top_k, H hidden_dim (4·D).
//   flat = x.reshape(N, D)
//   weights, indices = router(flat)                     (N, k) each
//   for each expert e: rows = the tokens that chose e, w = their weight for e
//       out[rows] += w · expert_e(flat[rows])           (M_e, D), M_e tokens
//   out.reshape(x's shape)
// Capacity (every expert's parameters) grows with E; the compute per token grows with k only:
// total parameters E·(8D² + 5D) + router, active per token k·(8D² + 5D) + router.
//
// The Switch Transformer's balance loss keeps the router from sending everything to one expert:
//   f_e = share of the N·k assignments that went to e   (counted from the integer indices)
//   P_e = mean over tokens of the router's probability for e
//   loss = E · Σ_e f_e · P_e       1 when both are uniform, E when all goes to one expert
// f has no gradient (counting is not differentiable); P carries the gradient to the gate.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/moe/router.h"
#include "g2c/nn/module.h"
#include "g2c/transformer/ffn.h"

namespace g2c::moe {

class MoEFeedForwardImpl : public g2c::nn::Module {
 public:
  /// Registers the E experts ("experts.0" … , each FeedForward(D, hidden_dim)) first, then the
  /// router. hidden_dim 0 means 4·D. ValueError as Router's and FeedForward's.
  MoEFeedForwardImpl(std::int64_t embedding_dim, std::int64_t num_experts, std::int64_t top_k,
                     std::int64_t hidden_dim = 0);

  /// x (…, D) -> (…, D), as above; keeps the router's indices (N, k) in last_indices.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// E · Σ_e f_e · P_e of the last forward (above), a scalar attached to the router's gate.
  /// g2c::RuntimeError before any forward.
  torch::Tensor load_balancing_loss();

  /// One expert's parameters: 8·D² + 5·D at the default width (2·D·H + H + D in general).
  std::int64_t expert_parameter_count() const;

  void pretty_print(std::ostream& stream) const override;

  std::int64_t embedding_dim;
  std::int64_t num_experts;
  std::int64_t top_k;
  std::int64_t hidden_dim;
  std::vector<g2c::transformer::FeedForward> experts;  // registered as "experts.0", …
  Router router{nullptr};
  torch::Tensor last_indices;  // (N, k) int64 of the last forward; undefined before the first
};
TORCH_MODULE(MoEFeedForward);

}  // namespace g2c::moe
