// Module 06 — the training loop every later module reuses.
//
// One step: draw a batch, compute the logits, cross-entropy against the next tokens, backward,
// SGD update. Every `log_every` steps (and at the last one) the loop records the training loss
// and, when validation ids are given, the validation perplexity.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/lm/language_model.h"

namespace g2c::lm {

/// What a logged step reports to TrainLMOptions::on_log.
struct TrainLogEntry {
  std::int64_t step = 0;
  double train_loss = 0.0;
  std::optional<double> val_perplexity;
};

struct TrainLMOptions {
  TORCH_ARG(std::int64_t, batch_size) = 32;
  TORCH_ARG(std::int64_t, num_steps) = 1000;
  TORCH_ARG(double, lr) = 0.1;
  TORCH_ARG(double, weight_decay) = 0.0;
  TORCH_ARG(std::int64_t, log_every) = 100;
  /// Batches drawn with this generator (nullopt: LibTorch's default one).
  TORCH_ARG(std::optional<at::Generator>, generator) = std::nullopt;
  /// "auto", "cpu", "cuda", "cuda:1", "mps". The model is moved there and trained there.
  TORCH_ARG(std::string, device) = "auto";
  /// Windows per batch for the validation perplexity.
  TORCH_ARG(std::int64_t, eval_batch_size) = 256;
  /// Called at every logged step (progress displays, live plots).
  TORCH_ARG(std::function<void(const TrainLogEntry&)>, on_log) = nullptr;
};

/// The losses of a run, one entry per logged step.
struct TrainingRecord {
  std::vector<std::int64_t> steps;
  std::vector<double> train_losses;
  std::vector<double> val_perplexities;  // empty without validation ids
};

/// Trains `model` with SGD on batches of `train_ids`; see the header comment.
/// ValueError for a model without parameters (fit() a counts model instead), too few ids, or
/// non-positive batch_size, num_steps or log_every.
TrainingRecord train_lm(LanguageModelImpl& model, const torch::Tensor& train_ids,
                        const std::optional<torch::Tensor>& val_ids = std::nullopt,
                        const TrainLMOptions& options = {});

template <LanguageModelHolder Model>
TrainingRecord train_lm(Model& model, const torch::Tensor& train_ids,
                        const std::optional<torch::Tensor>& val_ids = std::nullopt,
                        const TrainLMOptions& options = {}) {
  return train_lm(*model, train_ids, val_ids, options);
}

/// ValueError unless the arguments of train_lm make sense (see train_lm()).
void check_training_arguments(const LanguageModelImpl& model, const torch::Tensor& train_ids,
                              const std::optional<torch::Tensor>& val_ids,
                              const TrainLMOptions& options);

}  // namespace g2c::lm
