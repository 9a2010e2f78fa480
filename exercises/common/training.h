// The one training loop of the exercises, for any module that maps token ids (B, T) to next-token
// logits (B, T, V): module 07's tiny attention LM, module 08's multi-head variant, module 09's
// transformer.
//
// clang-format off
//   g2c::exercises::WindowSampler batches(corpus.train, T, B, TargetRule::kNextToken, /*seed=*/1);
//   const auto validation = WindowSampler(corpus.val, T, B, TargetRule::kNextToken, 0).fixed(16, 0);
//   g2c::nn::AdamW optimizer(model->parameters(), 3e-3);
//   const auto result = g2c::exercises::train_language_model(*model, optimizer, batches, validation,
//       TrainLanguageModelOptions().steps(2000).label("causal"));
//   result.final_train_loss;  // and the curves, timings and tokens/s
// clang-format on
//
// Each step: next batch -> logits -> next_token_loss -> zero_grad, backward, optimizer step. Every
// log_every steps and at the last one it records the batch's loss (before its update) and the
// mean loss over the validation batches. It stops at the first loss that is not finite with a
// message naming the likely cause and the files to check.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "exercises/common/batches.h"
#include "g2c/core/errors.h"
#include "g2c/nn/module.h"
#include "g2c/nn/optim.h"

namespace g2c::exercises {

/// Where a run reports its progress: update(steps done, "loss 4.912") while training, then
/// finish("loss 4.731, val 4.978") once. A g2c::Progress line by default; a ProgressBoard slot
/// when several runs train side by side.
struct ProgressSink {
  std::function<void(std::int64_t done, const std::string& metrics)> update;
  std::function<void(const std::string& metrics)> finish;
};

/// The settings of train_language_model, the exercises' one training loop.
struct TrainLanguageModelOptions {
  TORCH_ARG(std::int64_t, steps) = 1000;
  /// Record the training and validation loss every this many steps, and at the last step.
  TORCH_ARG(std::int64_t, log_every) = 50;
  /// Names the run in progress lines and messages ("causal", "H=4").
  TORCH_ARG(std::string, label) = "train";
  /// Show progress (on stderr). Ignored when `progress` is given.
  TORCH_ARG(bool, show_progress) = true;
  /// Report progress here instead of a progress line of the loop's own.
  TORCH_ARG(std::optional<ProgressSink>, progress) = std::nullopt;
  /// The student files a non-finite loss most likely comes from, named in the message
  /// ("g2c/attention/self_attention.cpp").
  TORCH_ARG(std::vector<std::string>, files_to_check) = {};
  /// The fast path's loss (g2c/nn/fused_cross_entropy.h) instead of the course's CrossEntropyLoss.
  TORCH_ARG(bool, fused_kernels) = false;
};

/// What a run measured. Losses are next-token cross-entropies in nats.
struct TrainResult {
  std::vector<std::int64_t> steps;  // the logged steps
  std::vector<double> train_loss;   // the training batch's loss at each logged step
  std::vector<double> val_loss;     // mean validation loss at each logged step (empty: none)
  double final_train_loss = 0.0;    // at the last step, before its update
  std::optional<double> final_val_loss;
  double train_seconds = 0.0;  // the steps themselves: batches, forward, backward, updates
  double eval_seconds = 0.0;   // validation
  double wall_seconds = 0.0;   // the whole loop
  std::int64_t tokens = 0;     // tokens read by the training steps (steps × B × T)

  /// Training throughput, validation left out.
  double tokens_per_second() const {
    return train_seconds > 0 ? static_cast<double>(tokens) / train_seconds : 0.0;
  }
};

/// Thrown when the training loss stops being finite (exit status 4): g2c::TrainingDiverged.
using g2c::TrainingDiverged;

/// Trains `model` (ids (B, T) -> logits (B, T, V), on the device it lives on) with `optimizer` on
/// `batches`, measuring `validation` (may be empty) at the logged steps; see the header comment.
/// Leaves the model in eval() mode. ValueError for steps or log_every < 1; TrainingDiverged for a
/// loss that is NaN or infinite.
TrainResult train_language_model(g2c::nn::Module& model, g2c::nn::Optimizer& optimizer,
                                 WindowSampler& batches, const std::vector<TokenBatch>& validation,
                                 const TrainLanguageModelOptions& options);

/// Mean next_token_loss of `model` over `batches` (the fused loss with `fused`), without
/// gradients, in eval() mode.
double mean_loss(g2c::nn::Module& model, const std::vector<TokenBatch>& batches,
                 bool fused = false);

}  // namespace g2c::exercises
