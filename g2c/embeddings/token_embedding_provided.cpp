#include <cmath>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/embeddings/token_embedding.h"

namespace g2c::embeddings {

void check_ids(const torch::Tensor& ids, const char* what, std::int64_t upper_bound,
               const char* bound_name) {
  if (!ids.defined()) throw ValueError(fmt::format("{} is an undefined tensor", what));
  if (!c10::isIntegralType(ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format(
        "{} must be an integer tensor of token ids (torch::kLong), got dtype {} with shape {}; "
        "ids index rows, they are not values",
        what, c10::toString(ids.scalar_type()), describe_shape(ids)));
  }
  if (ids.numel() == 0) return;
  // Both bounds in one pass, and on a GPU in one read: each read from the device waits for its
  // queue to drain.
  auto [min, max] = torch::aminmax(ids);
  if (!ids.is_cpu()) {
    const auto both = torch::stack({min, max}).cpu();  // (2)
    min = both[0];
    max = both[1];
  }
  const auto low = min.item<std::int64_t>();
  const auto high = max.item<std::int64_t>();
  if (low < 0 || high >= upper_bound) {
    throw ValueError(fmt::format("{} must lie in [0, {}={}), got values from {} to {}", what,
                                 bound_name, upper_bound, low, high));
  }
}

TokenEmbeddingImpl::TokenEmbeddingImpl(const TokenEmbeddingOptions& options_)
    : options(options_),
      vocab_size(options_.vocab_size()),
      embedding_dim(options_.embedding_dim()) {
  if (vocab_size <= 0 || embedding_dim <= 0) {
    throw ValueError(
        fmt::format("TokenEmbedding needs vocab_size > 0 and embedding_dim > 0, got "
                    "vocab_size={}, embedding_dim={}",
                    vocab_size, embedding_dim));
  }
  reset();
}

void TokenEmbeddingImpl::reset() {
  weight = register_parameter("weight", torch::empty({vocab_size, embedding_dim}));  // (V, D)
  reset_parameters();
}

void TokenEmbeddingImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(embedding_dim));
  weight.uniform_(-bound, bound);
}

void TokenEmbeddingImpl::check_input(const torch::Tensor& ids) const {
  check_ids(ids, "TokenEmbedding ids", vocab_size, "vocab_size");
}

void TokenEmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::embeddings::TokenEmbedding(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ")";
}

}  // namespace g2c::embeddings
