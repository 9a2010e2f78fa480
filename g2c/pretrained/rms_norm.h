// Module 16 — RMSNorm, the normalization of Llama-style models: LayerNorm (module 09) without the
// mean. Each position's vector is divided by its root mean square, then scaled per channel.
//
// Dimension legend: D embedding_dim; "…" any leading dims (B, T, …), each slice normalized alone.
//   ms  = mean(x², -1)                  (…, 1)   the mean of the squares, not a variance
//   y   = weight · x / √(ms + eps)      (…, D)
// Nothing is subtracted and nothing is added back (no β): the vector keeps its direction and only
// its length is set. Zhang & Sennrich (2019) found the centring of LayerNorm buys little and costs
// a second reduction; Llama, Mistral, Qwen and SmolLM all normalize this way.
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::pretrained {

/// x (…, D), weight (D) -> weight · x / √(mean(x², -1) + eps), (…, D).
/// Example: x = [[3, 4]], weight = [1, 1], eps = 0 -> [[0.8485, 1.1314]] (mean square 12.5).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

struct RMSNormOptions {
  explicit RMSNormOptions(std::int64_t embedding_dim) : embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, embedding_dim);  // D, the normalized (last) dimension
  /// Added to the mean square under the root: a zero vector stays finite. SmolLM2's file says 1e-5.
  TORCH_ARG(double, eps) = 1e-5;
};

class RMSNormImpl : public g2c::nn::Module {
 public:
  explicit RMSNormImpl(std::int64_t embedding_dim) : RMSNormImpl(RMSNormOptions(embedding_dim)) {}
  /// ValueError for embedding_dim <= 0 or eps < 0.
  explicit RMSNormImpl(const RMSNormOptions& options);

  /// x (…, D) -> rms_norm(x, weight, eps). ValueError unless the last dim of x is D.
  torch::Tensor forward(const torch::Tensor& x) override;

  void pretty_print(std::ostream& stream) const override;

  RMSNormOptions options;
  torch::Tensor weight;  // (D), starts at 1
};
TORCH_MODULE(RMSNorm);

}  // namespace g2c::pretrained
