// Module 05 — rotary position embeddings (RoPE): rotate each (query or key) vector by an angle
// proportional to its position, so that the dot product of two rotated vectors depends only on
// their *relative* position.
//
// Dimension legend: T sequence length, M max_seq_len, D embedding_dim (even).
// Convention: split halves. Dim i pairs with dim i + D/2 (not with i + 1, the "interleaved"
// convention of the original paper); both are rotations, but tables and weights of one do not
// work with the other.
//   inv_freq = 1 / base^(arange(0, D, 2) / D)            (D/2)
//   freqs    = outer(positions 0..M-1, inv_freq)         (M, D/2)
//   cos, sin = cos/sin(cat(freqs, freqs))                (M, D)   buffers
//   rope(x)  = x · cos[:T] + rotate_half(x) · sin[:T]    x (..., T, D) -> (..., T, D)
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"

namespace g2c::embeddings {

struct RotaryEmbeddingOptions {
  RotaryEmbeddingOptions(std::int64_t max_seq_len, std::int64_t embedding_dim)
      : max_seq_len_(max_seq_len), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, max_seq_len);    // M
  TORCH_ARG(std::int64_t, embedding_dim);  // D, even
  /// Wavelength scale: pair j turns at 1 / base^(2j / D) radians per position.
  TORCH_ARG(double, base) = 10000.0;
};

class RotaryEmbeddingImpl : public g2c::nn::Module {
 public:
  RotaryEmbeddingImpl(std::int64_t max_seq_len, std::int64_t embedding_dim, double base = 10000.0)
      : RotaryEmbeddingImpl(RotaryEmbeddingOptions(max_seq_len, embedding_dim).base(base)) {}
  /// ValueError("embedding_dim must be even for RoPE") for an odd D, checked before the tables
  /// are built.
  explicit RotaryEmbeddingImpl(const RotaryEmbeddingOptions& options);

  /// Registers the buffers `cos` and `sin` from build_cos_sin(M, D, base). No parameters.
  void reset();

  /// The (M, D) float32 tables {cos, sin}. Row 0 is all ones / all zeros (position 0 is not
  /// rotated); columns j and j + D/2 hold the same angle.
  static std::pair<torch::Tensor, torch::Tensor> build_cos_sin(std::int64_t max_seq_len,
                                                               std::int64_t embedding_dim,
                                                               double base);

  /// x (..., T, D) -> x·cos[:T] + rotate_half(x)·sin[:T], same shape and dtype as x.
  torch::Tensor forward(const torch::Tensor& x) override;

  /// x (..., D) with halves x1 = x[..., :D/2], x2 = x[..., D/2:] -> cat(-x2, x1).
  /// Example: [1, 2, 3, 4] -> [-3, -4, 1, 2].
  static torch::Tensor rotate_half(const torch::Tensor& x);

  /// ValueError unless x is floating point, on the tables' device, has at least 2 dims (..., T, D)
  /// with this layer's D, and T <= max_seq_len.
  void check_input(const torch::Tensor& x) const;

  void pretty_print(std::ostream& stream) const override;

  RotaryEmbeddingOptions options;
  std::int64_t max_seq_len;
  std::int64_t embedding_dim;
  double base;
  torch::Tensor cos;  // (M, D), a buffer
  torch::Tensor sin;  // (M, D), a buffer
};
TORCH_MODULE(RotaryEmbedding);

}  // namespace g2c::embeddings
