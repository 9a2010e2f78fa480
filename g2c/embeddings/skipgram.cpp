// Module 05 — your work: the skip-gram model, its training pairs, and its training loop.
#include "g2c/embeddings/skipgram.h"

#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss
#include "g2c/nn/optim.h"   // module 03's SGD

namespace g2c::embeddings {

void SkipGramEmbeddingModelImpl::reset() {
  // TODO: register "embedding" = TokenEmbedding(V, D), then "output" = g2c::nn::Linear(D, V).
  throw g2c::todo("SkipGramEmbeddingModel::reset", "g2c/embeddings/skipgram.cpp", "05");
}

torch::Tensor SkipGramEmbeddingModelImpl::forward(const torch::Tensor& center_ids) {
  // TODO: logits = output(embedding(center_ids)), shape (B, V).
  throw g2c::todo("SkipGramEmbeddingModel::forward", "g2c/embeddings/skipgram.cpp", "05");
}

SkipGramPairs make_skipgram_pairs(const torch::Tensor& ids, std::int64_t window) {
  // TODO: ValueError("window must be at least 1") for window < 1; ids a 1-D integer tensor. For
  // each position, pair its id with every id within `window` positions (not itself), clipped at
  // the ends, neighbours left to right.
  throw g2c::todo("make_skipgram_pairs", "g2c/embeddings/skipgram.cpp", "05");
}

std::vector<double> train_skipgram(SkipGramEmbeddingModel& model, const torch::Tensor& centers,
                                   const torch::Tensor& contexts, std::int64_t steps,
                                   std::int64_t batch_size, double lr,
                                   std::optional<at::Generator> generator) {
  // TODO: check_training_inputs(...); then each step: draw batch_size random pair indices with
  // generator, module 03's cross-entropy (g2c::nn::CrossEntropyLoss) of model(centers[batch])
  // against contexts[batch], a step of module 03's g2c::nn::SGD with lr; return every step's loss.
  throw g2c::todo("train_skipgram", "g2c/embeddings/skipgram.cpp", "05");
}

}  // namespace g2c::embeddings
