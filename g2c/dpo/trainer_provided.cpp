#include <functional>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/dpo/loss.h"
#include "g2c/dpo/trainer.h"
#include "g2c/pretraining/fine_tuning.h"

namespace g2c::dpo {

namespace {

/// The Python edition's argument checks and the two models', before anything is built or moved.
std::vector<PreferenceExample> checked_examples(std::vector<PreferenceExample> examples,
                                                const DPOTrainerOptions& options,
                                                const std::shared_ptr<g2c::nn::Module>& model,
                                                const std::shared_ptr<g2c::nn::Module>& ref_model) {
  if (examples.empty()) {
    throw ValueError("DPOTrainer needs at least one preference example, got none");
  }
  if (!(options.beta() > 0.0)) {
    throw ValueError(fmt::format(
        "beta must be positive, got {}: with beta = 0 the DPO loss is ln 2 with zero gradient "
        "whatever the policy does (0.1 is a good start)",
        options.beta()));
  }
  if (!model) throw ValueError("DPOTrainer needs a policy model, got a null pointer");
  if (!ref_model) {
    throw ValueError(
        "DPOTrainer needs a reference model, got a null pointer: pass a second copy of the "
        "policy's starting point (load the same checkpoint twice)");
  }
  if (ref_model == model) {
    throw ValueError(
        "ref_model is the policy itself: it would move with every update and the rewards would "
        "stay 0. Pass a separate copy (load the same checkpoint twice)");
  }
  return examples;
}

/// The reference, ready to be one: on the policy's device, in eval mode (no dropout: its scores
/// must be the same every time it sees an answer) and frozen, so no gradient is ever kept for it.
std::shared_ptr<g2c::nn::Module> frozen(std::shared_ptr<g2c::nn::Module> ref_model,
                                        torch::Device device) {
  ref_model->to(device);
  ref_model->eval();
  for (auto& parameter : ref_model->parameters()) parameter.requires_grad_(false);
  return ref_model;
}

}  // namespace

g2c::pretraining::StepMetrics loop_metrics(const DPOStepMetrics& m) {
  return {m.loss,
          m.lr,
          m.grad_norm,
          {{"chosen_reward", m.chosen_reward},
           {"rejected_reward", m.rejected_reward},
           {"reward_margin", m.reward_margin},
           {"accuracy", m.accuracy}}};
}

DPOTrainer::DPOTrainer(std::shared_ptr<g2c::nn::Module> model,
                       std::shared_ptr<g2c::nn::Module> ref_model,
                       std::vector<PreferenceExample> examples_, DPOTrainerOptions options_)
    : options(std::move(options_)),
      examples(checked_examples(std::move(examples_), options, model, ref_model)),
      trainer(std::move(model),
              g2c::pretraining::fine_tuning_recipe(options.trainer(), options.max_seq_len())),
      reference(frozen(std::move(ref_model), trainer.device)) {}

PreferenceBatch DPOTrainer::sample_batch(const std::vector<PreferenceExample>& from) {
  const auto drawn = g2c::pretraining::draw_examples(from, trainer.options.batch_size(),
                                                     trainer.options.generator());
  const auto batch = pad_and_collate_pref(drawn, options.max_seq_len(), options.pad_id());
  const auto on_device = [&](const torch::Tensor& t) { return t.to(trainer.device); };
  return {on_device(batch.chosen_x),   on_device(batch.chosen_y),   on_device(batch.chosen_mask),
          on_device(batch.rejected_x), on_device(batch.rejected_y), on_device(batch.rejected_mask)};
}

DPOEvalMetrics DPOTrainer::evaluate(const std::vector<PreferenceExample>& eval_examples) {
  if (eval_examples.empty()) {
    throw ValueError("evaluate needs at least one preference example, got an empty list");
  }
  const auto logp = [](g2c::nn::Module& m, const torch::Tensor& x, const torch::Tensor& y,
                       const torch::Tensor& mask) {
    return sequence_logprob(m.forward(x), y, mask);  // (B, L - 1, V) -> (B,)
  };
  const auto mean = g2c::pretraining::mean_over_batches(trainer.options.eval_iters(), [&] {
    const auto [cx, cy, cm, rx, ry, rm] = sample_batch(eval_examples);
    const auto [loss, metrics] =
        dpo_loss(logp(model(), cx, cy, cm), logp(model(), rx, ry, rm),
                 logp(ref_model(), cx, cy, cm), logp(ref_model(), rx, ry, rm), options.beta());
    return g2c::pretraining::EvalMetrics{
        loss.item<double>(),
        {{"chosen_reward", metrics.chosen_reward.item<double>()},
         {"rejected_reward", metrics.rejected_reward.item<double>()},
         {"reward_margin", metrics.reward_margin.item<double>()},
         {"accuracy", metrics.accuracy.item<double>()}}};
  });
  return {mean.loss, mean.extra.at("chosen_reward"), mean.extra.at("rejected_reward"),
          mean.extra.at("reward_margin"), mean.extra.at("accuracy")};
}

DPOHistory DPOTrainer::train(const std::vector<PreferenceExample>& eval_examples,
                             const g2c::pretraining::RunOptions& run_options) {
  DPOHistory history;
  std::function<g2c::pretraining::EvalMetrics()> evaluate_held_out;
  if (!eval_examples.empty()) {
    evaluate_held_out = [&] {
      const auto val = evaluate(eval_examples);
      // The two held-out extras the Python edition's history records.
      return g2c::pretraining::EvalMetrics{
          val.loss, {{"reward_margin", val.reward_margin}, {"accuracy", val.accuracy}}};
    };
  }
  trainer.run_loop([&] { return loop_metrics(train_step()); }, evaluate_held_out, history,
                   run_options);
  return history;
}

}  // namespace g2c::dpo
