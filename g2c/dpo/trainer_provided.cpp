#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/dpo/loss.h"
#include "g2c/dpo/trainer.h"
#include "g2c/pretraining/core_options.h"

namespace g2c::dpo {

namespace {

nlohmann::json finite_or_null(const std::vector<double>& values) {
  auto out = nlohmann::json::array();
  for (const double value : values) {
    out.push_back(std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr));
  }
  return out;
}

/// The Python edition's argument checks and the two models', before anything is built or moved.
std::vector<PreferenceExample> checked_examples(std::vector<PreferenceExample> examples,
                                                const DPOTrainerOptions& options,
                                                const std::shared_ptr<g2c::nn::Module>& model,
                                                const std::shared_ptr<g2c::nn::Module>& ref_model) {
  if (examples.empty()) {
    throw ValueError("DPOTrainer needs at least one preference example, got none");
  }
  g2c::pretraining::check_core_options(options);
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

nlohmann::json DPOHistory::to_json() const {
  auto out = losses.to_json();
  out["chosen_reward"] = finite_or_null(chosen_reward);
  out["rejected_reward"] = finite_or_null(rejected_reward);
  out["reward_margin"] = finite_or_null(reward_margin);
  out["accuracy"] = finite_or_null(accuracy);
  out["val_accuracy"] = finite_or_null(val_accuracy);
  out["val_reward_margin"] = finite_or_null(val_reward_margin);
  return out;
}

DPOTrainer::DPOTrainer(std::shared_ptr<g2c::nn::Module> model,
                       std::shared_ptr<g2c::nn::Module> ref_model,
                       std::vector<PreferenceExample> examples_, DPOTrainerOptions options_)
    : options(std::move(options_)),
      examples(checked_examples(std::move(examples_), options, model, ref_model)),
      core(std::move(model), g2c::pretraining::core_trainer_options(options)),
      reference(frozen(std::move(ref_model), core.device)) {}

PreferenceBatch DPOTrainer::sample_batch(const std::vector<PreferenceExample>& from) {
  if (from.empty()) throw ValueError("cannot draw a batch from an empty list of examples");
  const auto picks = torch::randint(static_cast<std::int64_t>(from.size()), {options.batch_size()},
                                    options.generator(), torch::kLong);
  std::vector<PreferenceExample> picked;
  picked.reserve(static_cast<std::size_t>(options.batch_size()));
  const auto* index = picks.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < options.batch_size(); ++i) {
    picked.push_back(from[static_cast<std::size_t>(index[i])]);
  }
  const auto batch = pad_and_collate_pref(picked, options.max_seq_len(), options.pad_id());
  const auto on_device = [&](const torch::Tensor& t) { return t.to(core.device); };
  return {on_device(batch.chosen_x),   on_device(batch.chosen_y),   on_device(batch.chosen_mask),
          on_device(batch.rejected_x), on_device(batch.rejected_y), on_device(batch.rejected_mask)};
}

DPOEvalMetrics DPOTrainer::evaluate(const std::vector<PreferenceExample>& eval_examples) {
  if (eval_examples.empty()) {
    throw ValueError("evaluate needs at least one preference example, got an empty list");
  }
  if (options.eval_iters() < 1) {
    throw ValueError(fmt::format("evaluate needs eval_iters >= 1, got {}", options.eval_iters()));
  }
  torch::NoGradGuard no_grad;
  const auto logp = [](g2c::nn::Module& m, const torch::Tensor& x, const torch::Tensor& y,
                       const torch::Tensor& mask) {
    return sequence_logprob(m.forward(x), y, mask);  // (B, L - 1, V) -> (B,)
  };
  DPOEvalMetrics sum;
  for (std::int64_t i = 0; i < options.eval_iters(); ++i) {
    const auto [cx, cy, cm, rx, ry, rm] = sample_batch(eval_examples);
    const auto [loss, metrics] =
        dpo_loss(logp(model(), cx, cy, cm), logp(model(), rx, ry, rm),
                 logp(ref_model(), cx, cy, cm), logp(ref_model(), rx, ry, rm), options.beta());
    sum.loss += loss.item<double>();
    sum.chosen_reward += metrics.chosen_reward.item<double>();
    sum.rejected_reward += metrics.rejected_reward.item<double>();
    sum.reward_margin += metrics.reward_margin.item<double>();
    sum.accuracy += metrics.accuracy.item<double>();
  }
  const auto n = static_cast<double>(options.eval_iters());
  return {sum.loss / n, sum.chosen_reward / n, sum.rejected_reward / n, sum.reward_margin / n,
          sum.accuracy / n};
}

DPOHistory DPOTrainer::train(const std::vector<PreferenceExample>& eval_examples,
                             const g2c::pretraining::TrainOptions& train_options) {
  DPOHistory history;
  // run_loop decides which steps it logs and appends them to history.losses after one_step
  // returns. Rather than repeat its rule, every step's DPO metrics wait in `last`, and `record`
  // copies them into the DPO series whenever losses.step has grown past them: at the next step,
  // before an evaluation, before on_log and at the end. So the DPO series always sit on exactly
  // the steps module 10's loop logged.
  std::optional<DPOStepMetrics> last;
  const auto record = [&] {
    if (last && history.step.size() < history.losses.step.size()) {
      history.step.push_back(history.losses.step.back());
      history.chosen_reward.push_back(last->chosen_reward);
      history.rejected_reward.push_back(last->rejected_reward);
      history.reward_margin.push_back(last->reward_margin);
      history.accuracy.push_back(last->accuracy);
    }
  };
  const auto one_step = [&] {
    record();
    last = train_step();
    return g2c::pretraining::StepMetrics{last->loss, last->lr, last->grad_norm};
  };
  std::function<double()> evaluate_held_out;
  if (!eval_examples.empty()) {
    evaluate_held_out = [&] {
      record();
      const auto val = evaluate(eval_examples);
      // run_loop appends val_step after this returns; the step that just ran is core.step - 1.
      history.val_step.push_back(core.step - 1);
      history.val_loss.push_back(val.loss);
      history.val_reward_margin.push_back(val.reward_margin);
      history.val_accuracy.push_back(val.accuracy);
      return val.loss;
    };
  }
  auto loop_options = train_options;
  if (train_options.on_log()) {
    loop_options.on_log([&, on_log = train_options.on_log()](const auto& event) {
      record();
      on_log(event);
    });
  }
  try {
    core.run_loop(one_step, evaluate_held_out, history.losses, loop_options);
  } catch (...) {
    record();
    throw;
  }
  record();
  return history;
}

}  // namespace g2c::dpo
