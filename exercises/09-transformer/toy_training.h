// The module 09 exercises' training loop, in one place: the lesson's toy token stream, random
// windows of it, and next-token training of any `ids -> logits` function with plain SGD (the
// lesson's choice) or AdamW.
//
// Dimension legend: N stream length, B batch, T context length, V vocab_size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

namespace g2c::exercises::toy {

/// The lesson's stream: [0, 1, …, 9, 3, 4, 5, 6, 7, 0] repeated `repeats` times, int64 (N = 16 ·
/// repeats; 3,200 tokens for 200). Only ids 0–9 occur; 3–7 occur twice per period, followed by
/// different tokens after 7, so predicting well needs context.
torch::Tensor toy_stream(std::int64_t repeats = 200);

/// `batch` windows x (B, T) and their next tokens y (B, T), starts uniform in [0, N - T) drawn from
/// `generator`.
std::pair<torch::Tensor, torch::Tensor> sequence_batch(const torch::Tensor& stream,
                                                       std::int64_t batch, std::int64_t length,
                                                       at::Generator& generator);

struct TrainConfig {
  std::int64_t steps = 300;
  std::int64_t batch_size = 32;
  std::int64_t context_length = 32;
  std::string optimizer = "sgd";  // "sgd" (the lesson) or "adamw"
  double lr = 1e-3;
  double weight_decay = 0.0;
  std::int64_t log_every = 25;   // the loss is recorded every log_every steps and at the last
  std::uint64_t batch_seed = 0;  // the batches' generator: the same batches for every model
};

/// A model as the loop sees it: ids (B, T) int64 -> logits (B, T, V).
using LogitsFn = std::function<torch::Tensor(const torch::Tensor&)>;

struct Curve {
  std::vector<std::int64_t> steps;
  std::vector<double> loss;  // the training batch's loss at each logged step, before its update
  double seconds = 0.0;
  double final_loss() const { return loss.empty() ? 0.0 : loss.back(); }
};

/// Trains `parameters` through `model` on next-token cross-entropy (module 03's CrossEntropyLoss
/// over all B·T positions). ValueError for an unknown optimizer or a stream shorter than T + 1.
Curve train_next_token(const LogitsFn& model, const std::vector<torch::Tensor>& parameters,
                       const torch::Tensor& stream, const TrainConfig& config,
                       const torch::Device& device, const std::string& label, bool progress);

/// The loop's settings as they go into a result file.
nlohmann::json to_json(const TrainConfig& config);

}  // namespace g2c::exercises::toy
