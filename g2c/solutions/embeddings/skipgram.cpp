// Module 05 — reference solution for g2c/embeddings/skipgram.cpp.
#include "g2c/embeddings/skipgram.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/shapes.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/optim.h"

namespace g2c::embeddings {

void SkipGramEmbeddingModelImpl::reset() {
  embedding = register_module("embedding", TokenEmbedding(vocab_size, embedding_dim));
  output = register_module("output", g2c::nn::Linear(embedding_dim, vocab_size));
}

torch::Tensor SkipGramEmbeddingModelImpl::forward(const torch::Tensor& center_ids) {
  return output(embedding(center_ids));  // (B) -> (B, D) -> (B, V)
}

SkipGramPairs make_skipgram_pairs(const torch::Tensor& ids, std::int64_t window) {
  if (window < 1) throw ValueError("window must be at least 1");
  if (!ids.defined() || ids.dim() != 1 ||
      !c10::isIntegralType(ids.scalar_type(), /*includeBool=*/false)) {
    throw ValueError(fmt::format("make_skipgram_pairs expects a 1-D integer tensor of ids, got {}",
                                 ids.defined()
                                     ? describe_shape(ids) + " " + c10::toString(ids.scalar_type())
                                     : "an undefined tensor"));
  }
  const auto n = ids.size(0);
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(ids.device());
  const auto offsets = torch::cat({torch::arange(-window, 0, options),
                                   torch::arange(1, window + 1, options)});  // (2w), left to right
  const auto positions = torch::arange(n, options).unsqueeze(1);             // (N, 1)
  const auto neighbours = positions + offsets;                               // (N, 2w)
  const auto inside = (neighbours >= 0) & (neighbours < n);                  // clipped at the ends
  // masked_select walks row by row: centre by centre, neighbours left to right.
  const auto center_positions = positions.expand_as(neighbours).masked_select(inside);  // (P)
  const auto context_positions = neighbours.masked_select(inside);                      // (P)
  const auto ids64 = ids.to(torch::kLong);
  return {ids64.index_select(0, center_positions), ids64.index_select(0, context_positions)};
}

std::vector<double> train_skipgram(SkipGramEmbeddingModel& model, const torch::Tensor& centers,
                                   const torch::Tensor& contexts, std::int64_t steps,
                                   std::int64_t batch_size, double lr,
                                   std::optional<at::Generator> generator) {
  check_training_inputs(centers, contexts, model->vocab_size, steps, batch_size, lr);
  const auto device = model->device();
  const auto all_centers = centers.to(device, torch::kLong);    // (N)
  const auto all_contexts = contexts.to(device, torch::kLong);  // (N)
  // Module 03's optimizer and loss.
  g2c::nn::SGD optimizer(model->parameters(), lr);
  const g2c::nn::CrossEntropyLoss cross_entropy;
  std::vector<double> losses;
  losses.reserve(static_cast<std::size_t>(steps));
  for (std::int64_t step = 0; step < steps; ++step) {
    // Indices drawn on the CPU, so a seeded generator gives the same batches on every device.
    const auto batch =
        torch::randint(centers.size(0), {batch_size}, generator, torch::kLong).to(device);  // (B)
    const auto logits = model->forward(all_centers.index_select(0, batch));  // (B, V)
    const auto loss = cross_entropy(logits, all_contexts.index_select(0, batch));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

}  // namespace g2c::embeddings
