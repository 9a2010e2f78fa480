#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/lm/bigram.h"

namespace g2c::lm {

CountsBigramLMImpl::CountsBigramLMImpl(std::int64_t vocab_size_, double smoothing_)
    : LanguageModelImpl("CountsBigramLM", vocab_size_, 1), smoothing(smoothing_) {
  if (!(smoothing >= 0.0)) {
    throw ValueError(fmt::format("CountsBigramLM needs smoothing >= 0, got {}", smoothing));
  }
  counts = register_buffer("counts", torch::zeros({vocab_size, vocab_size}, torch::kLong));
}

void CountsBigramLMImpl::check_ids(const torch::Tensor& ids) const {
  if (!ids.defined() || ids.dim() != 1 || ids.is_floating_point() ||
      ids.scalar_type() == torch::kBool) {
    throw ValueError(
        fmt::format("CountsBigramLM::fit expects a 1-D tensor of int64 token ids, got {}",
                    ids.defined() ? describe_shape(ids) + " " + c10::toString(ids.scalar_type())
                                  : "undefined"));
  }
  if (ids.numel() > 0 &&
      (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= vocab_size)) {
    throw ValueError(fmt::format(
        "CountsBigramLM has vocab_size {}: ids must be in [0, {}), got "
        "ids from {} to {}",
        vocab_size, vocab_size, ids.min().item<std::int64_t>(), ids.max().item<std::int64_t>()));
  }
}

void CountsBigramLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::lm::CountsBigramLM(vocab_size=" << vocab_size << ", smoothing=" << smoothing
         << ")";
}

NeuralBigramLMImpl::NeuralBigramLMImpl(std::int64_t vocab_size_, std::int64_t embedding_dim_)
    : LanguageModelImpl("NeuralBigramLM", vocab_size_, 1), embedding_dim(embedding_dim_) {
  if (embedding_dim <= 0) {
    throw ValueError(fmt::format("NeuralBigramLM needs embedding_dim > 0, got {}", embedding_dim));
  }
  embedding = register_module("embedding", torch::nn::Embedding(vocab_size, embedding_dim));
  register_layer("proj", proj, g2c::nn::Linear(embedding_dim, vocab_size));
}

void NeuralBigramLMImpl::pretty_print(std::ostream& stream) const {
  stream << "g2c::lm::NeuralBigramLM(vocab_size=" << vocab_size
         << ", embedding_dim=" << embedding_dim << ")";
}

}  // namespace g2c::lm
