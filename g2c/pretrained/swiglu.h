// Module 16 — the SwiGLU feed-forward of Llama-style models: module 09's two-layer MLP with a gate.
//
// Dimension legend: D embedding_dim, F hidden_dim (SmolLM2: 576 and 1536); "…" leading dims.
//   gate = x @ W_gate             (…, F)
//   up   = x @ W_up               (…, F)
//   h    = silu(gate) ⊙ up        (…, F)    silu(z) = z · σ(z), elementwise product ⊙
//   y    = h @ W_down             (…, D)
// The course's FFN is GELU(x @ W1 + b1) @ W2 + b2. Here a second projection of the same x decides,
// feature by feature, how much of the activated one passes (Shazeer, 2020, "GLU Variants Improve
// Transformer"); there are no biases. Three matrices instead of two, so F is about 8/3·D instead
// of 4·D for the same parameter count.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"
#include "g2c/pretrained/packed_weight.h"

namespace g2c::pretrained {

struct SwiGLUOptions {
  SwiGLUOptions(std::int64_t embedding_dim, std::int64_t hidden_dim)
      : embedding_dim_(embedding_dim), hidden_dim_(hidden_dim) {}
  TORCH_ARG(std::int64_t, embedding_dim);  // D
  TORCH_ARG(std::int64_t, hidden_dim);     // F
};

class SwiGLUImpl : public g2c::nn::Module {
 public:
  SwiGLUImpl(std::int64_t embedding_dim, std::int64_t hidden_dim)
      : SwiGLUImpl(SwiGLUOptions(embedding_dim, hidden_dim)) {}
  /// Registers W_gate, W_up, W_down (in that order), drawn like module 03's Linear. ValueError for
  /// a size <= 0.
  explicit SwiGLUImpl(const SwiGLUOptions& options);

  /// x (…, D) -> (silu(x @ W_gate) ⊙ (x @ W_up)) @ W_down, (…, D). Check x first (check_input).
  torch::Tensor forward(const torch::Tensor& x) override;

  /// The same product on the fast path, from the packed blocks (`packed` must hold them).
  torch::Tensor forward_packed(const torch::Tensor& x);

  /// ValueError unless x has at least one dimension and its last one is D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  SwiGLUOptions options;
  torch::Tensor W_gate;  // (D, F), the branch that goes through silu
  torch::Tensor W_up;    // (D, F), the branch it multiplies
  torch::Tensor W_down;  // (F, D)

  /// The fast path (load_llama with LoadOptions().packed(true)): the three matrices kept in the
  /// file's blocks (packed_weight.h); W_gate, W_up and W_down are then empty.
  struct PackedProjections {
    PackedWeight gate, up, down;  // (F, D), (F, D), (D, F) as the file stores them
  };
  std::optional<PackedProjections> packed;
};
TORCH_MODULE(SwiGLU);

}  // namespace g2c::pretrained
