#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/embeddings/skipgram.h"

namespace g2c::embeddings {

SkipGramEmbeddingModelImpl::SkipGramEmbeddingModelImpl(
    const SkipGramEmbeddingModelOptions& options_)
    : options(options_),
      vocab_size(options_.vocab_size()),
      embedding_dim(options_.embedding_dim()) {
  if (vocab_size <= 0 || embedding_dim <= 0) {
    throw ValueError(
        fmt::format("SkipGramEmbeddingModel needs vocab_size > 0 and embedding_dim > "
                    "0, got vocab_size={}, embedding_dim={}",
                    vocab_size, embedding_dim));
  }
  reset();
}

void SkipGramEmbeddingModelImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::embeddings::SkipGramEmbeddingModel(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ")";
}

void check_training_inputs(const torch::Tensor& centers, const torch::Tensor& contexts,
                           std::int64_t vocab_size, std::int64_t steps, std::int64_t batch_size,
                           double lr) {
  for (const auto& [name, ids] : {std::pair{"centers", centers}, std::pair{"contexts", contexts}}) {
    if (!ids.defined() || ids.dim() != 1) {
      throw ValueError(fmt::format("train_skipgram expects {} as a 1-D tensor (N), got {}", name,
                                   ids.defined() ? describe_shape(ids) : "an undefined tensor"));
    }
    check_ids(ids, name, vocab_size, "vocab_size");
  }
  if (centers.numel() != contexts.numel()) {
    throw ValueError(fmt::format(
        "train_skipgram needs as many centers as contexts, got {} centers and {} contexts",
        centers.numel(), contexts.numel()));
  }
  if (centers.numel() == 0) {
    throw ValueError("train_skipgram got no pairs: centers and contexts are empty");
  }
  if (steps < 1 || batch_size < 1 || !(lr > 0.0)) {
    throw ValueError(
        fmt::format("train_skipgram needs steps >= 1, batch_size >= 1 and lr > 0, got steps={}, "
                    "batch_size={}, lr={}",
                    steps, batch_size, lr));
  }
}

}  // namespace g2c::embeddings
