#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/embeddings/positional.h"

namespace g2c::embeddings {

namespace {

void check_sizes(const char* name, const PositionalEmbeddingOptions& options) {
  if (options.max_seq_len() <= 0 || options.embedding_dim() <= 0) {
    throw ValueError(fmt::format(
        "{} needs max_seq_len > 0 and embedding_dim > 0, got max_seq_len={}, embedding_dim={}",
        name, options.max_seq_len(), options.embedding_dim()));
  }
}

}  // namespace

void check_seq_len(std::int64_t seq_len, std::int64_t max_seq_len) {
  if (seq_len > max_seq_len) {
    throw ValueError(fmt::format("seq_len {} exceeds max_seq_len {}", seq_len, max_seq_len));
  }
  if (seq_len < 1) throw ValueError(fmt::format("seq_len must be at least 1, got {}", seq_len));
}

LearnedPositionalEmbeddingImpl::LearnedPositionalEmbeddingImpl(
    const PositionalEmbeddingOptions& options_)
    : options(options_),
      max_seq_len(options_.max_seq_len()),
      embedding_dim(options_.embedding_dim()) {
  check_sizes("LearnedPositionalEmbedding", options);
  reset();
}

void LearnedPositionalEmbeddingImpl::reset() {
  weight = register_parameter("weight", torch::empty({max_seq_len, embedding_dim}));  // (M, D)
  reset_parameters();
}

void LearnedPositionalEmbeddingImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(embedding_dim));
  weight.uniform_(-bound, bound);
}

void LearnedPositionalEmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::embeddings::LearnedPositionalEmbedding(max_seq_len=" << max_seq_len
         << ", embedding_dim=" << embedding_dim << ")";
}

SinusoidalPositionalEmbeddingImpl::SinusoidalPositionalEmbeddingImpl(
    const PositionalEmbeddingOptions& options_)
    : options(options_),
      max_seq_len(options_.max_seq_len()),
      embedding_dim(options_.embedding_dim()) {
  check_sizes("SinusoidalPositionalEmbedding", options);
  if (embedding_dim % 2 != 0) {
    throw ValueError("embedding_dim must be even for sinusoidal encoding");
  }
  reset();
}

void SinusoidalPositionalEmbeddingImpl::reset() {
  // A buffer, not a parameter: it follows to(device) and torch::save, and no optimizer sees it.
  weight = register_buffer("weight", build_table(max_seq_len, embedding_dim));  // (M, D)
}

void SinusoidalPositionalEmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::embeddings::SinusoidalPositionalEmbedding(max_seq_len=" << max_seq_len
         << ", embedding_dim=" << embedding_dim << ")";
}

}  // namespace g2c::embeddings
