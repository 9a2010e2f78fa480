// Module 09 — layer normalization: every position's vector rescaled to zero mean and unit variance,
// then given back a learned per-channel scale (gamma) and shift (beta).
//
// Dimension legend: D embedding_dim; "…" any leading dims (B, T, …), each slice normalized alone.
//   mean = x.mean(-1)                      (…, 1)
//   var  = population variance over -1     (…, 1)   (divide by D, not D - 1)
//   x̂    = (x - mean) / √(var + eps)       (…, D)
//   y    = gamma · x̂ + beta                (…, D)
// Unlike BatchNorm it pools nothing across the batch or the sequence, so it behaves the same at
// training and inference time and with a batch of one.
#pragma once

#include <cstdint>
#include <ostream>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::transformer {

struct LayerNormOptions {
  explicit LayerNormOptions(std::int64_t embedding_dim) : embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, embedding_dim);  // D, the normalized (last) dimension
  /// Added to the variance under the square root: a constant vector (variance 0) stays finite.
  TORCH_ARG(double, eps) = 1e-5;
};

class LayerNormImpl : public g2c::nn::Module {
 public:
  explicit LayerNormImpl(std::int64_t embedding_dim)
      : LayerNormImpl(LayerNormOptions(embedding_dim)) {}
  /// ValueError for embedding_dim <= 0 or eps <= 0.
  explicit LayerNormImpl(const LayerNormOptions& options);

  /// Registers gamma then beta, each (D), and initialises them.
  void reset();
  /// gamma = 1, beta = 0: at initialisation the layer only standardizes.
  void reset_parameters();

  /// x (…, D) -> (…, D), normalized over the last dim. Example: D = 2, x = [[1, 3]] with gamma = 1,
  /// beta = 0 -> ≈ [[-1, 1]] (mean 2, population variance 1).
  torch::Tensor forward(const torch::Tensor& x) override;

  /// ValueError unless x has at least one dimension and its last one is D.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  LayerNormOptions options;
  std::int64_t embedding_dim;
  double eps;
  torch::Tensor gamma;  // (D), scale, starts at 1
  torch::Tensor beta;   // (D), shift, starts at 0
};
TORCH_MODULE(LayerNorm);

}  // namespace g2c::transformer
