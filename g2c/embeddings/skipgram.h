// Module 05 — skip-gram: learning embeddings from co-occurrence. Each token predicts the tokens
// around it; the embedding table that makes those predictions good puts tokens that share
// neighbours close together.
//
// Dimension legend: N number of (centre, context) pairs, B batch, V vocab_size, D embedding_dim.
//   centre ids (B) -> embedding (B, D) -> output Linear(D, V) -> logits (B, V)
//   loss = cross-entropy(logits, context ids)
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/embeddings/token_embedding.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/module.h"

namespace g2c::embeddings {

struct SkipGramEmbeddingModelOptions {
  SkipGramEmbeddingModelOptions(std::int64_t vocab_size, std::int64_t embedding_dim)
      : vocab_size_(vocab_size), embedding_dim_(embedding_dim) {}
  TORCH_ARG(std::int64_t, vocab_size);     // V
  TORCH_ARG(std::int64_t, embedding_dim);  // D
};

class SkipGramEmbeddingModelImpl : public g2c::nn::Module {
 public:
  SkipGramEmbeddingModelImpl(std::int64_t vocab_size, std::int64_t embedding_dim)
      : SkipGramEmbeddingModelImpl(SkipGramEmbeddingModelOptions(vocab_size, embedding_dim)) {}
  explicit SkipGramEmbeddingModelImpl(const SkipGramEmbeddingModelOptions& options);

  /// Registers `embedding` = TokenEmbedding(V, D) then `output` = g2c::nn::Linear(D, V):
  /// parameters embedding.weight (V, D), output.W (D, V), output.b (V), in that order.
  void reset();

  /// centre ids (B) int64 -> logits over the vocabulary (B, V).
  torch::Tensor forward(const torch::Tensor& center_ids) override;

  void pretty_print(std::ostream& stream) const override;

  SkipGramEmbeddingModelOptions options;
  std::int64_t vocab_size;
  std::int64_t embedding_dim;
  TokenEmbedding embedding{nullptr};
  g2c::nn::Linear output{nullptr};
};
TORCH_MODULE(SkipGramEmbeddingModel);

/// Training pairs: centers[k] should predict contexts[k]. Both (N) int64.
struct SkipGramPairs {
  torch::Tensor centers;   // (N)
  torch::Tensor contexts;  // (N)
};

/// Every centre with each neighbour within `window` positions, clipped at the ends, centre by
/// centre and neighbours left to right. Example: [10, 20, 30], window 1 -> centers
/// [10, 20, 20, 30], contexts [20, 10, 30, 20]. ValueError("window must be at least 1") for
/// window < 1; ids must be a 1-D integer tensor.
SkipGramPairs make_skipgram_pairs(const torch::Tensor& ids, std::int64_t window = 2);

/// `steps` steps of SGD (learning rate `lr`) on the cross-entropy of model(centers[batch]) against
/// contexts[batch], each batch `batch_size` indices drawn uniformly (with replacement) with
/// `generator`. Returns the loss of every step. Runs on the model's device.
std::vector<double> train_skipgram(SkipGramEmbeddingModel& model, const torch::Tensor& centers,
                                   const torch::Tensor& contexts, std::int64_t steps = 500,
                                   std::int64_t batch_size = 128, double lr = 0.2,
                                   std::optional<at::Generator> generator = std::nullopt);

/// ValueError unless centers and contexts are non-empty 1-D integer tensors of the same length with
/// ids in [0, vocab_size), and steps, batch_size and lr are positive. train_skipgram calls it
/// first.
void check_training_inputs(const torch::Tensor& centers, const torch::Tensor& contexts,
                           std::int64_t vocab_size, std::int64_t steps, std::int64_t batch_size,
                           double lr);

}  // namespace g2c::embeddings
