// Module 05 — your work: the skip-gram model, its training pairs, and its training loop.
#include "g2c/embeddings/skipgram.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/nn/losses.h"  // module 03's CrossEntropyLoss
#include "g2c/nn/optim.h"   // module 03's SGD

namespace g2c::embeddings {

void SkipGramEmbeddingModelImpl::reset() {
  // TODO: Build and register the two pieces of skip-gram under the names checkpoints use:
  // "embedding", a TokenEmbedding (V, D) for the centre word, and "output", module 03's Linear
  // scoring every word of the vocabulary as a neighbour.
  // Hints, one step at a time: scripts/hint.sh 05 SkipGramEmbeddingModel::reset
  throw g2c::todo("SkipGramEmbeddingModel::reset", "g2c/embeddings/skipgram.cpp", "05");
}

torch::Tensor SkipGramEmbeddingModelImpl::forward(const torch::Tensor& center_ids) {
  // TODO: Centre ids (B) -> their vectors (B, D) -> one score per vocabulary word (B, V).
  // Hints, one step at a time: scripts/hint.sh 05 SkipGramEmbeddingModel::forward
  throw g2c::todo("SkipGramEmbeddingModel::forward", "g2c/embeddings/skipgram.cpp", "05");
}

SkipGramPairs make_skipgram_pairs(const torch::Tensor& ids, std::int64_t window) {
  // TODO: Every (centre, context) pair with the context within `window` positions of the centre, on
  // either side, itself excluded, clipped at the ends; ordered centre by centre, neighbours left to
  // right. ValueErrors for window < 1 and for ids that are not a 1-D integer tensor. Without a
  // loop: offsets -w … -1, 1 … w added to a column of positions give an (N, 2w) table; keep those
  // inside [0, N).
  // Hints, one step at a time: scripts/hint.sh 05 make_skipgram_pairs
  throw g2c::todo("make_skipgram_pairs", "g2c/embeddings/skipgram.cpp", "05");
}

std::vector<double> train_skipgram(SkipGramEmbeddingModel& model, const torch::Tensor& centers,
                                   const torch::Tensor& contexts, std::int64_t steps,
                                   std::int64_t batch_size, double lr,
                                   std::optional<at::Generator> generator) {
  // TODO: Train the model to predict each pair's context from its centre: random minibatches of
  // pair indices drawn on the CPU with the caller's generator (the same batches on every device),
  // module 03's cross-entropy and SGD at lr, `steps` steps, every step's loss returned. Check the
  // inputs first (check_training_inputs).
  // Hints, one step at a time: scripts/hint.sh 05 train_skipgram
  throw g2c::todo("train_skipgram", "g2c/embeddings/skipgram.cpp", "05");
}

}  // namespace g2c::embeddings
