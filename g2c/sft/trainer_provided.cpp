#include "g2c/core/errors.h"
#include "g2c/pretraining/fine_tuning.h"
#include "g2c/sft/loss.h"
#include "g2c/sft/trainer.h"

namespace g2c::sft {

namespace {

/// The Python edition's argument checks, before anything is built or moved.
std::vector<SFTExample> checked_examples(std::vector<SFTExample> examples) {
  if (examples.empty()) {
    throw ValueError("SFTTrainer needs at least one training example, got none");
  }
  return examples;
}

}  // namespace

SFTTrainer::SFTTrainer(std::shared_ptr<g2c::nn::Module> model, std::vector<SFTExample> examples_,
                       SFTTrainerOptions options_)
    : options(std::move(options_)),
      examples(checked_examples(std::move(examples_))),
      trainer(std::move(model),
              g2c::pretraining::fine_tuning_recipe(options.trainer(), options.max_seq_len())) {}

SFTBatch SFTTrainer::sample_batch(const std::vector<SFTExample>& from) {
  const auto drawn = g2c::pretraining::draw_examples(from, trainer.options.batch_size(),
                                                     trainer.options.generator());
  auto batch = pad_and_collate(drawn, options.max_seq_len(), options.pad_id());
  const auto& device = trainer.device;
  return {batch.x.to(device), batch.y.to(device), batch.loss_mask.to(device)};
}

double SFTTrainer::evaluate(const std::vector<SFTExample>& eval_examples) {
  if (eval_examples.empty()) {
    throw ValueError("evaluate needs at least one example, got an empty list");
  }
  return g2c::pretraining::mean_over_batches(
             trainer.options.eval_iters(),
             [&] {
               const auto [x, y, loss_mask] = sample_batch(eval_examples);
               const auto logits = trainer.model->forward(x);  // (B, L - 1, V)
               return g2c::pretraining::EvalMetrics{
                   masked_cross_entropy(logits, y, loss_mask).item<double>()};
             })
      .loss;
}

g2c::pretraining::TrainingHistory SFTTrainer::train(
    const std::vector<SFTExample>& eval_examples, const g2c::pretraining::RunOptions& run_options) {
  g2c::pretraining::TrainingHistory history;
  std::function<g2c::pretraining::EvalMetrics()> evaluate_held_out;
  if (!eval_examples.empty()) {
    evaluate_held_out = [&] { return g2c::pretraining::EvalMetrics{evaluate(eval_examples)}; };
  }
  trainer.run_loop([&] { return train_step(); }, evaluate_held_out, history, run_options);
  return history;
}

}  // namespace g2c::sft
