// Module 13 — the SFT trainer: module 10's Trainer with another batch and another loss.
//
// One step, in the order module 10 taught (only the first and fourth lines are new):
//   batch   x, y, loss_mask = sample_batch(examples)        B random examples, (B, L - 1) each
//   lr      lr = this step's cosine_with_warmup; optimizer->lr = lr  (before the counter moves)
//   grads   zero_grad; logits = model(x)                    (B, L - 1, V)
//   loss    masked_cross_entropy(logits, y, loss_mask); backward
//   clip    grad_norm = clip_grad_norm_(params, grad_clip)   (pre-clip norm; 0.0 without clip)
//   update  optimizer->step(); step += 1
// Everything else is the module 10 Trainer this one holds (`trainer`): the device, the optimizer
// (AdamW by default, as the Python edition's SFT), the schedule, the step counter, the training
// loop with its logging, evaluation and checkpoints (Trainer::run_loop). SFTTrainer::train_step
// is the student's.
//
//   auto options = SFTTrainerOptions(/*max_seq_len=*/128, /*pad_id=*/0, /*batch_size=*/16,
//                                    /*max_steps=*/300, /*max_lr=*/3e-4);
//   options.trainer().grad_clip(1.0);
//   SFTTrainer sft(model, examples, options);
//   auto history = sft.train(held_out_examples);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

#include "g2c/nn/module.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/sft/data.h"

namespace g2c::sft {

/// Module 13's settings, and the module 10 recipe it trains with (`trainer`, AdamW by default as
/// the Python edition's SFT). The recipe's context_length follows max_seq_len: the trainer gives
/// its Trainer max_seq_len - 1 (fine_tuning_recipe).
///   auto options = SFTTrainerOptions(/*max_seq_len=*/128, /*pad_id=*/0, /*batch_size=*/16,
///                                    /*max_steps=*/300, /*max_lr=*/3e-4);
///   options.trainer().grad_clip(1.0).warmup_steps(30);
struct SFTTrainerOptions {
  SFTTrainerOptions(std::int64_t max_seq_len, std::int64_t pad_id, std::int64_t batch_size,
                    std::int64_t max_steps, double max_lr)
      : max_seq_len_(max_seq_len),
        pad_id_(pad_id),
        trainer_(g2c::pretraining::TrainerOptions(batch_size, max_seq_len - 1, max_steps, max_lr)
                     .optimizer("adamw")) {}
  TORCH_ARG(std::int64_t, max_seq_len);  // ids per padded example before the shift (≤ the model's)
  TORCH_ARG(std::int64_t, pad_id);       // fills short examples; its targets are never learned
  /// batch_size is examples per step, drawn uniformly with replacement; max_lr is about 10× below
  /// pretraining's; the generator draws every batch's examples (and is saved in checkpoints).
  TORCH_ARG(g2c::pretraining::TrainerOptions, trainer);
};

class SFTTrainer {
 public:
  /// Checks the arguments, then builds the module 10 Trainer (device, model moved there,
  /// optimizer). ValueError for no examples, batch_size <= 0 or max_seq_len <= 1 (the shift by
  /// one would leave nothing), and whatever the Trainer refuses (an unknown optimizer or device).
  SFTTrainer(std::shared_ptr<g2c::nn::Module> model, std::vector<SFTExample> examples,
             SFTTrainerOptions options);
  template <typename ModuleType>
  SFTTrainer(const torch::nn::ModuleHolder<ModuleType>& model, std::vector<SFTExample> examples,
             SFTTrainerOptions options)
      : SFTTrainer(std::static_pointer_cast<g2c::nn::Module>(model.ptr()), std::move(examples),
                   std::move(options)) {}

  /// The schedule's learning rate at `step` (the current step when none), as module 10's.
  double lr() const { return trainer.lr(); }
  double lr(std::int64_t at_step) const { return trainer.lr(at_step); }

  /// batch_size examples drawn uniformly (with replacement) from `from` by the trainer's
  /// generator (draw_examples), collated by pad_and_collate and moved to the device. ValueError
  /// when `from` is empty.
  SFTBatch sample_batch(const std::vector<SFTExample>& from);

  /// One optimization step on a fresh batch of the training examples; advances the step by one.
  /// Returns the batch's masked loss (before the update), the lr used and the pre-clip gradient
  /// norm (0.0 without grad_clip).
  g2c::pretraining::StepMetrics train_step();

  /// Mean masked_cross_entropy over eval_iters batches of `eval_examples`, without autograd.
  /// ValueError for an empty list.
  double evaluate(const std::vector<SFTExample>& eval_examples);

  /// Trains until the step reaches max_steps through module 10's loop (Trainer::run_loop), with
  /// its history, on_log and checkpoints; evaluates on `eval_examples` every eval_every steps
  /// when it is not empty. The options' val_ids are not used.
  g2c::pretraining::TrainingHistory train(const std::vector<SFTExample>& eval_examples = {},
                                          const g2c::pretraining::RunOptions& run_options = {});

  std::int64_t step() const { return trainer.step; }
  torch::Device device() const { return trainer.device; }
  std::int64_t max_steps() const { return trainer.options.max_steps(); }
  std::int64_t batch_size() const { return trainer.options.batch_size(); }
  g2c::nn::Module& model() { return *trainer.model; }

  SFTTrainerOptions options;  // as given; the recipe in use is trainer.options
  std::vector<SFTExample> examples;
  /// Module 10's Trainer, on which this one is built: model, device, optimizer, step, the recipe
  /// (trainer.options), schedule, loop and checkpoints.
  g2c::pretraining::Trainer trainer;
};

}  // namespace g2c::sft
