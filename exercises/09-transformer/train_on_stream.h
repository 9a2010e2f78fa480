// Next-token training on one token stream for the module 09 exercises, through the exercises' one
// training loop (exercises/common/training.h): the settings the programs share and their flags,
// the optimizer they name, random windows of the stream as batches, and the loss curve as a result
// file records it.
//
//   TrainSettings settings;  // the lesson's: SGD, lr 1e-3, batch 32, context 32
//   add_train_options(app, settings);
//   const auto result = train_on_stream(*model, toy_stream(200), settings, "pre_norm", true);
//   runs["pre_norm"] = curve_json(result);  // {"steps", "loss", "final_loss", "seconds"}
//
// Dimension legend: N stream length, B batch, T context length, V vocab_size.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "exercises/common/training.h"
#include "g2c/core/cli.h"
#include "g2c/nn/module.h"

namespace g2c::exercises::toy {

/// What the module 09 programs choose about training; the defaults are the lesson's.
struct TrainSettings {
  std::int64_t steps = 300;
  std::int64_t batch_size = 32;      // B
  std::int64_t context_length = 32;  // T, also the models' max_seq_len
  std::string optimizer = "sgd";     // "sgd" (the lesson) or "adamw"
  double lr = 1e-3;
  double weight_decay = 0.0;
  std::int64_t log_every = 25;   // the loss is recorded every log_every steps and at the last
  std::uint64_t batch_seed = 0;  // the batches' generator: the same batches for every model
};

/// Adds --optimizer, --lr, --weight-decay and --log-every to `app`, their defaults taken from
/// `settings`. Steps and the batch seed come from the common --steps and --seed.
void add_train_options(g2c::CommandLine& app, TrainSettings& settings);

/// Trains `model` (ids (B, T) -> logits (B, T, V), on the device it lives on) on next-token
/// cross-entropy over all T positions of windows of `stream` (N), drawn uniformly from a generator
/// seeded with settings.batch_seed: the same batches for every model given the same settings.
/// Reports the training batch's loss every log_every steps and at the last, before its update; no
/// validation. `label` names the run in progress lines. ValueError for an optimizer other than sgd
/// or adamw, or a stream shorter than T + 1; TrainingDiverged for a loss that is not finite.
g2c::exercises::TrainResult train_on_stream(g2c::nn::Module& model, const torch::Tensor& stream,
                                            const TrainSettings& settings, const std::string& label,
                                            bool show_progress);

/// The settings as they go into a result file: {"steps": 300, "batch_size": 32, …}.
nlohmann::json settings_json(const TrainSettings& settings);

/// A run's loss curve as it goes into a result file: {"steps": [0, 25, …], "loss": [4.306, …],
/// "final_loss": 2.211, "seconds": 89.5}.
nlohmann::json curve_json(const g2c::exercises::TrainResult& result);

}  // namespace g2c::exercises::toy
