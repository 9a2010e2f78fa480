#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/lm/mlp.h"

namespace g2c::lm {

MLPLanguageModelImpl::MLPLanguageModelImpl(std::int64_t vocab_size_, std::int64_t context_length_,
                                           std::int64_t embedding_dim_, std::int64_t hidden_dim_)
    : LanguageModelImpl("MLPLanguageModel", vocab_size_, context_length_),
      embedding_dim(embedding_dim_),
      hidden_dim(hidden_dim_) {
  if (embedding_dim <= 0 || hidden_dim <= 0) {
    throw ValueError(
        fmt::format("MLPLanguageModel needs embedding_dim > 0 and hidden_dim > 0, got {} and {}",
                    embedding_dim, hidden_dim));
  }
  embedding = register_module("embedding", torch::nn::Embedding(vocab_size, embedding_dim));
  register_layer("hidden", hidden, g2c::nn::Linear(context_length * embedding_dim, hidden_dim));
  register_layer("output", output, g2c::nn::Linear(hidden_dim, vocab_size));
}

void MLPLanguageModelImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::lm::MLPLanguageModel(vocab_size=" << vocab_size
         << ", context_length=" << context_length << ", embedding_dim=" << embedding_dim
         << ", hidden_dim=" << hidden_dim << ")";
}

}  // namespace g2c::lm
