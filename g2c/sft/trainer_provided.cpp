#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/pretraining/core_options.h"
#include "g2c/sft/loss.h"
#include "g2c/sft/trainer.h"

namespace g2c::sft {

namespace {

/// The Python edition's argument checks, before anything is built or moved.
std::vector<SFTExample> checked_examples(std::vector<SFTExample> examples,
                                         const SFTTrainerOptions& options) {
  if (examples.empty()) {
    throw ValueError("SFTTrainer needs at least one training example, got none");
  }
  g2c::pretraining::check_core_options(options);
  return examples;
}

}  // namespace

SFTTrainer::SFTTrainer(std::shared_ptr<g2c::nn::Module> model, std::vector<SFTExample> examples_,
                       SFTTrainerOptions options_)
    : options(std::move(options_)),
      examples(checked_examples(std::move(examples_), options)),
      core(std::move(model), g2c::pretraining::core_trainer_options(options)) {}

SFTBatch SFTTrainer::sample_batch(const std::vector<SFTExample>& from) {
  if (from.empty()) throw ValueError("cannot draw a batch from an empty list of examples");
  const auto picks = torch::randint(static_cast<std::int64_t>(from.size()), {options.batch_size()},
                                    options.generator(), torch::kLong);
  std::vector<SFTExample> chosen;
  chosen.reserve(static_cast<std::size_t>(options.batch_size()));
  const auto* index = picks.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < options.batch_size(); ++i) {
    chosen.push_back(from[static_cast<std::size_t>(index[i])]);
  }
  auto batch = pad_and_collate(chosen, options.max_seq_len(), options.pad_id());
  return {batch.x.to(core.device), batch.y.to(core.device), batch.loss_mask.to(core.device)};
}

double SFTTrainer::evaluate(const std::vector<SFTExample>& eval_examples) {
  if (eval_examples.empty()) {
    throw ValueError("evaluate needs at least one example, got an empty list");
  }
  if (options.eval_iters() < 1) {
    throw ValueError(fmt::format("evaluate needs eval_iters >= 1, got {}", options.eval_iters()));
  }
  torch::NoGradGuard no_grad;
  double total = 0.0;
  for (std::int64_t i = 0; i < options.eval_iters(); ++i) {
    const auto [x, y, loss_mask] = sample_batch(eval_examples);
    total += masked_cross_entropy(core.model->forward(x), y, loss_mask).item<double>();
  }
  return total / static_cast<double>(options.eval_iters());
}

g2c::pretraining::TrainingHistory SFTTrainer::train(
    const std::vector<SFTExample>& eval_examples,
    const g2c::pretraining::TrainOptions& train_options) {
  g2c::pretraining::TrainingHistory history;
  std::function<double()> evaluate_held_out;
  if (!eval_examples.empty()) evaluate_held_out = [&] { return evaluate(eval_examples); };
  core.run_loop([&] { return train_step(); }, evaluate_held_out, history, train_options);
  return history;
}

}  // namespace g2c::sft
