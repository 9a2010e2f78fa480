// Module 05 — reference solution for g2c/embeddings/rotary.cpp.
#include "g2c/embeddings/rotary.h"

namespace g2c::embeddings {

std::pair<torch::Tensor, torch::Tensor> RotaryEmbeddingImpl::build_cos_sin(
    std::int64_t max_seq_len, std::int64_t embedding_dim, double base) {
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  const auto exponents =
      torch::arange(0, embedding_dim, 2, options) / static_cast<double>(embedding_dim);  // (D/2)
  const auto inv_freq = 1.0 / torch::pow(base, exponents);                               // (D/2)
  const auto positions = torch::arange(max_seq_len, options);                            // (M)
  const auto freqs = torch::outer(positions, inv_freq);                                  // (M, D/2)
  const auto angles = torch::cat({freqs, freqs}, /*dim=*/-1);  // (M, D): dim i and i + D/2 share
  return {torch::cos(angles).to(torch::kFloat), torch::sin(angles).to(torch::kFloat)};
}

torch::Tensor RotaryEmbeddingImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto seq_len = x.size(-2);
  const auto c = cos.narrow(0, 0, seq_len).to(x.scalar_type());  // (T, D), broadcast over (...)
  const auto s = sin.narrow(0, 0, seq_len).to(x.scalar_type());  // (T, D)
  return x * c + rotate_half(x) * s;                             // (..., T, D)
}

}  // namespace g2c::embeddings
