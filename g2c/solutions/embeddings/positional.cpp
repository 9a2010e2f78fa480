// Module 05 — reference solution for g2c/embeddings/positional.cpp.
#include "g2c/embeddings/positional.h"

namespace g2c::embeddings {

using torch::indexing::None;
using torch::indexing::Slice;

torch::Tensor LearnedPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  check_seq_len(seq_len, max_seq_len);
  return weight.narrow(/*dim=*/0, /*start=*/0, seq_len);  // (T, D)
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::build_table(std::int64_t max_seq_len,
                                                             std::int64_t embedding_dim) {
  // Computed in float64, stored in float32: sin of large angles keeps its precision this way.
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  const auto position = torch::arange(max_seq_len, options).unsqueeze(1);  // (M, 1)
  const auto even_dims = torch::arange(0, embedding_dim, 2, options);      // (D/2): 0, 2, 4, …
  const auto frequency =
      torch::pow(10000.0, -even_dims / static_cast<double>(embedding_dim));  // (D/2)
  const auto angles = position * frequency;                                  // (M, D/2)
  auto table = torch::empty({max_seq_len, embedding_dim}, options);          // (M, D)
  table.index_put_({Slice(), Slice(0, None, 2)}, torch::sin(angles));        // even columns
  table.index_put_({Slice(), Slice(1, None, 2)}, torch::cos(angles));        // odd columns
  return table.to(torch::kFloat);
}

torch::Tensor SinusoidalPositionalEmbeddingImpl::forward(std::int64_t seq_len) {
  check_seq_len(seq_len, max_seq_len);
  return weight.narrow(/*dim=*/0, /*start=*/0, seq_len);  // (T, D)
}

}  // namespace g2c::embeddings
