// Module 14 — the DPO trainer: module 13's SFTTrainer with two models and a preference loss.
//
// It trains the policy (`model`) against a frozen copy of where it started (`ref_model`, usually
// the same SFT checkpoint loaded twice). One step, in the order modules 10 and 13 taught:
//   batch   cx, cy, cm, rx, ry, rm = sample_batch(examples)      (B, L - 1) each, on the device
//   lr      lr = this step's cosine_with_warmup; optimizer->lr = lr  (before the counter moves)
//   grads   zero_grad
//   policy  π_c = sequence_logprob(model(cx), cy, cm); π_r likewise       (B,) each, with grad
//   ref     ref_c, ref_r the same through ref_model, under NoGradGuard   (B,) each, no grad
//   loss    loss, metrics = dpo_loss(π_c, π_r, ref_c, ref_r, beta); backward
//   clip    grad_norm = clip_grad_norm_(policy params, grad_clip)  (pre-clip norm; 0.0 without)
//   update  optimizer->step(); step += 1
// Everything else is the module 10 Trainer this one holds (`trainer`) for the policy: the device,
// the optimizer (AdamW by default) on the policy's parameters only, the schedule, the step counter,
// the loop with its logging, evaluation and checkpoints (Trainer::run_loop). The reference is moved
// to the same device, put in eval mode and frozen (requires_grad false on every parameter): the
// rewards measure how far the policy moved from it, so it must not move. DPOTrainer::train_step
// is the student's.
//
//   DPOTrainer dpo(policy, reference, pairs, DPOTrainerOptions(/*max_seq_len=*/128, /*pad_id=*/0,
//                  /*beta=*/0.1, /*batch_size=*/16, /*max_steps=*/200, /*max_lr=*/3e-5));
//   auto history = dpo.train(held_out_pairs);  // history.extra.at("reward_margin"), …
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/dpo/data.h"
#include "g2c/nn/module.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::dpo {

/// Module 14's settings, and the module 10 recipe it trains the policy with (`trainer`, AdamW by
/// default). The recipe's context_length follows max_seq_len: the trainer gives its Trainer
/// max_seq_len - 1 (fine_tuning_recipe).
///   auto options = DPOTrainerOptions(/*max_seq_len=*/128, /*pad_id=*/0, /*beta=*/0.1,
///                                    /*batch_size=*/16, /*max_steps=*/200, /*max_lr=*/3e-5);
///   options.trainer().grad_clip(1.0);
struct DPOTrainerOptions {
  DPOTrainerOptions(std::int64_t max_seq_len, std::int64_t pad_id, double beta,
                    std::int64_t batch_size, std::int64_t max_steps, double max_lr)
      : max_seq_len_(max_seq_len),
        pad_id_(pad_id),
        beta_(beta),
        trainer_(g2c::pretraining::TrainerOptions(batch_size, max_seq_len - 1, max_steps, max_lr)
                     .optimizer("adamw")) {}
  TORCH_ARG(std::int64_t, max_seq_len);  // ids per padded prompt + answer before the shift
  TORCH_ARG(std::int64_t, pad_id);       // fills short rows; its targets are never scored
  /// How strongly the policy is held near the reference (the β of the DPO paper, 0.1–0.5): the
  /// rewards are β times log-ratios, so a larger β makes the same move of the policy count more.
  TORCH_ARG(double, beta);
  /// batch_size is preference pairs per step, drawn with replacement; max_lr is about 10× below
  /// SFT's; the generator draws every batch's pairs (and is saved in checkpoints).
  TORCH_ARG(g2c::pretraining::TrainerOptions, trainer);
};

/// What one train_step reports (Python's dict of floats).
struct DPOStepMetrics {
  double loss = 0.0;       // the batch's DPO loss, before the update
  double lr = 0.0;         // the learning rate the update used
  double grad_norm = 0.0;  // policy gradient norm before clipping; 0.0 when grad_clip is unset
  double chosen_reward = 0.0;
  double rejected_reward = 0.0;
  double reward_margin = 0.0;
  double accuracy = 0.0;
};

/// What evaluate reports: each value averaged over eval_iters batches.
struct DPOEvalMetrics {
  double loss = 0.0;
  double chosen_reward = 0.0;
  double rejected_reward = 0.0;
  double reward_margin = 0.0;
  double accuracy = 0.0;
};

/// What train() records: module 10's history (step, train_loss, lr, grad_norm every log_every
/// steps and at the last; val_step, val_loss at every evaluation) with the DPO metrics as its
/// extras, recorded by module 10's loop on the same steps: extra["chosen_reward"],
/// ["rejected_reward"], ["reward_margin"], ["accuracy"] beside `step`, val_extra["reward_margin"]
/// and ["accuracy"] beside `val_step`. to_json() gives the Python edition's twelve keys.
using DPOHistory = g2c::pretraining::TrainingHistory;

/// A step's metrics as module 10's loop records them: the DPO four as extras.
g2c::pretraining::StepMetrics loop_metrics(const DPOStepMetrics& metrics);

class DPOTrainer {
 public:
  /// Checks the arguments, builds the module 10 Trainer for the policy (device, policy moved there,
  /// optimizer on its parameters), then moves the reference to the same device, puts it in eval
  /// mode and freezes it. ValueError for no examples, batch_size <= 0, max_seq_len <= 1 (the shift
  /// by one would leave nothing), beta <= 0 (the loss would be ln 2 whatever the policy does), a
  /// null ref_model, ref_model the same object as model (then nothing is a reference), and
  /// whatever the Trainer refuses (an unknown optimizer or device).
  DPOTrainer(std::shared_ptr<g2c::nn::Module> model, std::shared_ptr<g2c::nn::Module> ref_model,
             std::vector<PreferenceExample> examples, DPOTrainerOptions options);
  template <typename ModuleType>
  DPOTrainer(const torch::nn::ModuleHolder<ModuleType>& model,
             const torch::nn::ModuleHolder<ModuleType>& ref_model,
             std::vector<PreferenceExample> examples, DPOTrainerOptions options)
      : DPOTrainer(std::static_pointer_cast<g2c::nn::Module>(model.ptr()),
                   std::static_pointer_cast<g2c::nn::Module>(ref_model.ptr()), std::move(examples),
                   std::move(options)) {}

  /// The schedule's learning rate at `step` (the current step when none), as module 10's.
  double lr() const { return trainer.lr(); }
  double lr(std::int64_t at_step) const { return trainer.lr(at_step); }

  /// batch_size examples drawn uniformly (with replacement) from `from` by the trainer's
  /// generator (draw_examples), collated by pad_and_collate_pref and moved to the device.
  /// ValueError when `from` is empty.
  PreferenceBatch sample_batch(const std::vector<PreferenceExample>& from);

  /// One optimization step of the policy on a fresh batch of the training examples; advances the
  /// step by one. Returns the batch's loss and metrics (before the update), the lr used and the
  /// pre-clip gradient norm (0.0 without grad_clip).
  DPOStepMetrics train_step();

  /// The DPO loss and metrics averaged over eval_iters batches of `eval_examples`, without
  /// autograd. ValueError for an empty list.
  DPOEvalMetrics evaluate(const std::vector<PreferenceExample>& eval_examples);

  /// Trains until the step reaches max_steps through module 10's loop (Trainer::run_loop), with
  /// its logging, on_log and checkpoints of the policy; evaluates on `eval_examples` every
  /// eval_every steps when it is not empty. The options' val_ids are not used.
  DPOHistory train(const std::vector<PreferenceExample>& eval_examples = {},
                   const g2c::pretraining::RunOptions& run_options = {});

  std::int64_t step() const { return trainer.step; }
  torch::Device device() const { return trainer.device; }
  std::int64_t max_steps() const { return trainer.options.max_steps(); }
  std::int64_t batch_size() const { return trainer.options.batch_size(); }
  double beta() const { return options.beta(); }
  /// The policy: the model being trained.
  g2c::nn::Module& model() { return *trainer.model; }
  /// The frozen reference.
  g2c::nn::Module& ref_model() { return *reference; }

  DPOTrainerOptions options;  // as given; the recipe in use is trainer.options
  std::vector<PreferenceExample> examples;
  /// Module 10's Trainer for the policy: model, device, optimizer, step, the recipe
  /// (trainer.options), schedule, loop and checkpoints.
  g2c::pretraining::Trainer trainer;
  /// The reference model: on trainer.device, in eval mode, every parameter frozen.
  std::shared_ptr<g2c::nn::Module> reference;
};

}  // namespace g2c::dpo
