#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/embeddings/positional.h"
#include "g2c/embeddings/rotary.h"

namespace g2c::embeddings {

RotaryEmbeddingImpl::RotaryEmbeddingImpl(const RotaryEmbeddingOptions& options_)
    : options(options_),
      max_seq_len(options_.max_seq_len()),
      embedding_dim(options_.embedding_dim()),
      base(options_.base()) {
  if (max_seq_len <= 0 || embedding_dim <= 0 || !(base > 0.0)) {
    throw ValueError(
        fmt::format("RotaryEmbedding needs max_seq_len > 0, embedding_dim > 0 and base > 0, got "
                    "max_seq_len={}, embedding_dim={}, base={}",
                    max_seq_len, embedding_dim, base));
  }
  if (embedding_dim % 2 != 0) throw ValueError("embedding_dim must be even for RoPE");
  reset();
}

void RotaryEmbeddingImpl::reset() {
  auto [cos_table, sin_table] = build_cos_sin(max_seq_len, embedding_dim, base);
  cos = register_buffer("cos", cos_table);  // (M, D)
  sin = register_buffer("sin", sin_table);  // (M, D)
}

torch::Tensor RotaryEmbeddingImpl::rotate_half(const torch::Tensor& x) {
  const auto half = x.size(-1) / 2;
  const auto x1 = x.narrow(-1, 0, half);     // (..., D/2), dims 0 .. D/2-1
  const auto x2 = x.narrow(-1, half, half);  // (..., D/2), dims D/2 .. D-1
  return torch::cat({-x2, x1}, /*dim=*/-1);  // (..., D)
}

void RotaryEmbeddingImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() < 2 || x.size(-1) != embedding_dim) {
    throw ValueError(fmt::format(
        "RotaryEmbedding(embedding_dim={}) expects x of shape (..., T, D={}), got {}",
        embedding_dim, embedding_dim, x.defined() ? describe_shape(x) : "an undefined tensor"));
  }
  if (!x.is_floating_point()) {
    throw ValueError(fmt::format("RotaryEmbedding expects floating-point x, got dtype {}",
                                 c10::toString(x.scalar_type())));
  }
  if (x.device() != cos.device()) {
    throw ValueError(
        fmt::format("RotaryEmbedding: x is on {} but the cos/sin tables are on {}; "
                    "move the module with ->to(device)",
                    x.device().str(), cos.device().str()));
  }
  check_seq_len(x.size(-2), max_seq_len);
}

void RotaryEmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::embeddings::RotaryEmbedding(max_seq_len=" << max_seq_len
         << ", embedding_dim=" << embedding_dim << ", base=" << base << ")";
}

}  // namespace g2c::embeddings
