// Module 10 — the Trainer: the pretraining loop of a language model, with evaluation, logging and
// checkpoints that resume exactly.
//
// One training step, in the order that matters:
//   batch   x, y = get_lm_batch(train_ids, B, T, generator)     (B, T) each, moved to the device
//   lr      lr = cosine_with_warmup(step, …); optimizer->lr = lr  (read *before* step advances)
//   grads   zero_grad; loss = lm_cross_entropy(model(x), y); loss.backward()
//   clip    grad_norm = clip_grad_norm_(params, grad_clip)       (pre-clip norm; 0.0 without clip)
//   update  optimizer->step(); step += 1
// train() repeats that until step == max_steps, appending to a TrainingHistory every log_every
// steps, evaluating on held-out ids every eval_every steps, and writing a rolling checkpoint every
// checkpoint_every steps. Trainer::train_step is the student's; the rest is provided.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/nn/module.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/data.h"

namespace g2c::pretraining {

/// Further named metrics of a step or an evaluation, beside its loss (module 14's rewards and
/// accuracy). Ordered by name, so every record of them lists them the same way.
using NamedMetrics = std::map<std::string, double>;

/// What one train_step reports: StepMetrics{loss, lr, grad_norm} (and its extras, if any).
struct StepMetrics {
  StepMetrics() = default;
  StepMetrics(double loss, double lr, double grad_norm, NamedMetrics extra = {})
      : loss(loss), lr(lr), grad_norm(grad_norm), extra(std::move(extra)) {}
  double loss = 0.0;       // the batch's mean loss, before the update
  double lr = 0.0;         // the learning rate the update used
  double grad_norm = 0.0;  // global gradient norm before clipping; 0.0 when grad_clip is unset
  NamedMetrics extra;      // logged beside the loss, each as a series of its own
};

/// What one evaluation reports: the held-out loss, and the extras the history records beside it.
struct EvalMetrics {
  EvalMetrics() = default;
  explicit EvalMetrics(double loss, NamedMetrics extra = {})
      : loss(loss), extra(std::move(extra)) {}
  double loss = 0.0;
  NamedMetrics extra;
};

/// The series a training run records. step/train_loss/lr/grad_norm are appended together every
/// log_every steps (and at the last step); val_step/val_loss every eval_every steps when there is
/// validation data. Steps are the 0-based index of the step that ran. A step's or an evaluation's
/// extras become series too: extra[name] beside `step`, val_extra[name] beside `val_step`.
struct TrainingHistory {
  std::vector<std::int64_t> step;
  std::vector<double> train_loss;
  std::vector<double> lr;
  std::vector<double> grad_norm;
  std::vector<std::int64_t> val_step;
  std::vector<double> val_loss;
  std::map<std::string, std::vector<double>> extra;
  std::map<std::string, std::vector<double>> val_extra;

  /// {"step": [...], "train_loss": [...], "lr": [...], "grad_norm": [...], "val_step": [...],
  /// "val_loss": [...]}, then each extra under its name and each val_extra under "val_" + its
  /// name. Non-finite numbers are written as null (JSON has no NaN).
  nlohmann::json to_json() const;
  bool operator==(const TrainingHistory&) const = default;
};

/// A history with six empty series and no extras (Python's empty_training_history()).
TrainingHistory empty_training_history();

/// What on_log receives at every logged or evaluated step.
struct LogEvent {
  std::int64_t step = 0;  // index of the step that just ran
  double train_loss = 0.0;
  std::optional<double> val_loss;  // set only when this step evaluated
  double lr = 0.0;
  double grad_norm = 0.0;
  NamedMetrics extra;        // the step's extras
  NamedMetrics val_extra;    // the evaluation's extras, when this step evaluated
  double elapsed_s = 0.0;    // since this train() call started
  double steps_per_s = 0.0;  // steps of this call / elapsed_s
};

/// A training run's recipe. Module 13's and 14's trainers hold one of these (plus only their own
/// settings) and pass it to the module 10 Trainer they are built on.
struct TrainerOptions {
  TrainerOptions(std::int64_t batch_size, std::int64_t context_length, std::int64_t max_steps,
                 double max_lr)
      : batch_size_(batch_size),
        context_length_(context_length),
        max_steps_(max_steps),
        max_lr_(max_lr) {}
  TORCH_ARG(std::int64_t, batch_size);      // B windows per step
  TORCH_ARG(std::int64_t, context_length);  // T tokens per window (≤ the model's max_seq_len)
  TORCH_ARG(std::int64_t, max_steps);       // the run's length and the schedule's horizon
  TORCH_ARG(double, max_lr);                // peak learning rate, at the end of warmup
  TORCH_ARG(double, min_lr) = 0.0;          // floor at the end of the cosine
  TORCH_ARG(std::int64_t, warmup_steps) = 0;
  TORCH_ARG(double, weight_decay) = 0.0;
  TORCH_ARG(std::optional<double>, grad_clip) = std::nullopt;  // global norm; unset: no clipping
  TORCH_ARG(std::int64_t, eval_every) = 100;
  TORCH_ARG(std::int64_t, eval_iters) = 20;  // batches averaged by evaluate()
  TORCH_ARG(std::int64_t, log_every) = 10;
  /// Draws every training and evaluation batch (and is saved in checkpoints, so a resumed run
  /// draws the same batches). Unset: LibTorch's global generator, not saved.
  TORCH_ARG(std::optional<at::Generator>, generator) = std::nullopt;
  TORCH_ARG(std::string, device) = "auto";    // "auto", "cpu", "cuda", "mps"
  TORCH_ARG(std::string, optimizer) = "sgd";  // "sgd", "adamw" or "muon", any case
  /// "muon" only: the peak learning rate of its AdamW side (embeddings, norms, biases), scheduled
  /// like max_lr; max_lr is the Muon side's (g2c/muon/partition.h).
  TORCH_ARG(double, adamw_lr) = 3e-4;
  /// The fast path: AdamW through LibTorch's fused kernel (g2c::nn::FusedAdamW), the same update
  /// with the same state. Off: the course's AdamW, the one written in module 03b.
  TORCH_ARG(bool, fused_kernels) = false;
};

/// The recipe as result files, manifests and checkpoints record it (the one writer of it):
/// {batch_size, context_length, max_steps, optimizer (lower case), fused_kernels, max_lr, min_lr,
/// warmup_steps, weight_decay, grad_clip (null when unset), eval_every, eval_iters, log_every},
/// and adamw_lr when the optimizer is "muon".
nlohmann::json trainer_options_json(const TrainerOptions& options);

/// The mean of `one_batch`'s loss and extras over `batches` calls, without autograd: what every
/// evaluate() of the course's trainers reports. ValueError for batches < 1.
EvalMetrics mean_over_batches(std::int64_t batches, const std::function<EvalMetrics()>& one_batch);

/// The optional parts of one run of train() (or run_loop).
struct RunOptions {
  TORCH_ARG(std::optional<torch::Tensor>, val_ids) = std::nullopt;  // held-out 1-D ids
  TORCH_ARG(std::function<void(const LogEvent&)>, on_log) = nullptr;
  TORCH_ARG(std::optional<std::filesystem::path>, checkpoint_path) = std::nullopt;
  /// Save every N completed steps and at the last one; needs checkpoint_path.
  TORCH_ARG(std::optional<std::int64_t>, checkpoint_every) = std::nullopt;
  TORCH_ARG(nlohmann::json, checkpoint_extra) = nlohmann::json::object();
};

/// Everything a checkpoint file holds besides the tensors it restores in place.
struct Checkpoint {
  std::int64_t version = 2;
  nlohmann::json trainer;  // step and trainer_options_json's keys
  TrainingHistory history;
  nlohmann::json extra;        // whatever the caller stored (model config, tokenizer name, …)
  std::filesystem::path path;  // the file read: `<path>.bak` when the checkpoint was not readable
  std::string note;            // why `<path>.bak` was read (say it to the user); empty otherwise
};

class Trainer {
 public:
  /// Resolves the device, moves the model there, then builds the optimizer on its parameters that
  /// require gradients — a frozen one gets no optimizer state — (g2c::nn::make_optimizer:
  /// SGD(max_lr, weight_decay) or AdamW(max_lr, default betas and eps, weight_decay), FusedAdamW
  /// with fused_kernels; for "muon", g2c::muon::scheduled_muon: the Linear weights to Muon at
  /// max_lr, the rest to AdamW at adamw_lr); step = 0. ValueError for an unknown optimizer name,
  /// an unavailable device, or a model with no parameter to train.
  /// Example: Trainer trainer(model, TrainerOptions(/*batch_size=*/32, /*context_length=*/128,
  ///          /*max_steps=*/1000, /*max_lr=*/6e-4).optimizer("adamw").grad_clip(1.0));
  Trainer(std::shared_ptr<g2c::nn::Module> model, TrainerOptions options);
  template <typename ModuleType>
  Trainer(const torch::nn::ModuleHolder<ModuleType>& model, TrainerOptions options)
      : Trainer(std::static_pointer_cast<g2c::nn::Module>(model.ptr()), std::move(options)) {}

  /// The schedule's learning rate at `step` (the current step when none):
  /// cosine_with_warmup(step, warmup_steps, max_steps, max_lr, min_lr).
  double lr() const { return lr(step); }
  double lr(std::int64_t at_step) const;

  /// One optimization step on a fresh batch of train_ids (token ids, or any TokenStream such as a
  /// mixture of corpora); advances `step` by one.
  StepMetrics train_step(const TokenSource& train_ids);

  /// Mean lm_cross_entropy over eval_iters batches of ids, without autograd. The batches come
  /// from the trainer's generator, like the training batches. Perplexity is std::exp of it.
  double evaluate(const TokenSource& ids);

  /// Trains until step == max_steps, appending to `history` and returning it. ValueError when
  /// checkpoint_every is set and not positive. If a step throws, a checkpoint of the last
  /// completed step is written (when checkpoint_path is set) before the exception goes on.
  TrainingHistory& train(const TokenSource& train_ids, TrainingHistory& history,
                         const RunOptions& options = {});
  /// The same with a new history, returned by value.
  TrainingHistory train(const TokenSource& train_ids, const RunOptions& options = {});

  /// The loop train() runs, for any kind of step: calls `one_step` (which must advance `step` by
  /// one) until step == max_steps, logging, evaluating with `evaluate_held_out` (when set; the
  /// options' val_ids are not used here), calling on_log and checkpointing exactly as train()
  /// does. The extras of the steps it logs and of its evaluations join the history as series.
  /// Modules 13 and 14 train through it with their own batches and losses.
  TrainingHistory& run_loop(const std::function<StepMetrics()>& one_step,
                            const std::function<EvalMetrics()>& evaluate_held_out,
                            TrainingHistory& history, const RunOptions& options = {});

  /// Writes model parameters, optimizer state, generator state, step, hyper-parameters, history and
  /// `extra` to one file (an archive, g2c/core/archive.h), atomically: through a temporary file and
  /// a rename, with the previous checkpoint kept as `<path>.bak`. A run killed mid-save leaves the
  /// last good checkpoint. `extra` is JSON (JSON has no NaN: non-finite numbers become null).
  void save_checkpoint(const std::filesystem::path& path, const TrainingHistory& history = {},
                       const nlohmann::json& extra = nlohmann::json::object()) const;

  /// Restores model parameters, optimizer state, step and (when this trainer has a generator)
  /// the generator state from a save_checkpoint file, and returns its history and extra. When
  /// `path` is missing or cannot be read (truncated, damaged) and `<path>.bak` can, that is loaded
  /// and Checkpoint::note says so. Everything is read and checked before anything is restored: a
  /// ValueError (a missing or unreadable file, another parameter count, shape or dtype, AdamW
  /// moments that do not fit, another optimizer, naming both) leaves the trainer as it was.
  Checkpoint load_checkpoint(const std::filesystem::path& path);

  std::shared_ptr<g2c::nn::Module> model;
  TrainerOptions options;
  torch::Device device;
  std::string optimizer_name;  // "sgd", "adamw" or "muon"
  std::unique_ptr<g2c::nn::Optimizer> optimizer;
  std::int64_t step = 0;  // steps completed; the next train_step runs step `step`
};

/// Reads a checkpoint file's metadata and history without a trainer, falling back to
/// `<path>.bak` like Trainer::load_checkpoint (ValueError when neither is a readable checkpoint).
Checkpoint read_checkpoint(const std::filesystem::path& path);

}  // namespace g2c::pretraining
