// Beyond module rl, implemented for you: the trainer's construction, its task draws, the loop
// around train_step and the greedy evaluation.
#include <cmath>
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/rl/trainer.h"
#include "g2c/sampling/generate.h"

namespace g2c::rl {

namespace {

/// NaN as null: JSON has no NaN, and a skipped step's diagnostics are gaps, not zeros.
nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json series(const std::vector<double>& values) {
  auto out = nlohmann::json::array();
  for (const double value : values) out.push_back(number_or_null(value));
  return out;
}

}  // namespace

nlohmann::json GRPOStepMetrics::to_json() const {
  return {{"loss", number_or_null(loss)},
          {"mean_reward", number_or_null(mean_reward)},
          {"kl", number_or_null(kl)},
          {"sample_entropy", number_or_null(sample_entropy)},
          {"skipped", skipped}};
}

void GRPOHistory::append(const GRPOStepMetrics& metrics) {
  loss.push_back(metrics.loss);
  mean_reward.push_back(metrics.mean_reward);
  kl.push_back(metrics.kl);
  sample_entropy.push_back(metrics.sample_entropy);
  skipped.push_back(metrics.skipped);
}

nlohmann::json GRPOHistory::to_json() const {
  return {{"loss", series(loss)},
          {"mean_reward", series(mean_reward)},
          {"kl", series(kl)},
          {"sample_entropy", series(sample_entropy)},
          {"skipped", series(skipped)}};
}

GRPOTrainer::GRPOTrainer(g2c::transformer::TransformerLM model_,
                         g2c::transformer::TransformerLM ref_model_,
                         std::shared_ptr<const g2c::inference::TextCodec> tokenizer_,
                         std::vector<Task> tasks_, Verifier verifier_, GRPOOptions options_)
    : GRPOTrainer(transformer_policy(std::move(model_)), transformer_policy(std::move(ref_model_)),
                  std::move(tokenizer_), std::move(tasks_), std::move(verifier_),
                  std::move(options_)) {}

GRPOTrainer::GRPOTrainer(std::shared_ptr<Policy> model_, std::shared_ptr<Policy> ref_model_,
                         std::shared_ptr<const g2c::inference::TextCodec> tokenizer_,
                         std::vector<Task> tasks_, Verifier verifier_, GRPOOptions options_)
    : model(std::move(model_)),
      ref_model(std::move(ref_model_)),
      tokenizer(std::move(tokenizer_)),
      tasks(std::move(tasks_)),
      verifier(std::move(verifier_)),
      options(std::move(options_)),
      task_rng(options.seed()),
      generator(at::make_generator<at::CPUGeneratorImpl>(options.seed())) {
  if (tasks.empty()) {
    throw ValueError("GRPOTrainer: tasks must be non-empty: each step draws its prompt from them");
  }
  if (options.temperature() != 1.0) {
    throw ValueError(fmt::format(
        "GRPOTrainer: this simplified on-policy trainer needs temperature=1.0; got {}. It rescores "
        "each completion with the model's untempered probabilities, which are the ones the "
        "completion was sampled from only at temperature 1",
        options.temperature()));
  }
  if (options.group_size() < 2) {
    throw ValueError(
        fmt::format("GRPOTrainer: group_size must be >= 2 (the group is its own baseline); got {}",
                    options.group_size()));
  }
  if (!model || !ref_model) {
    throw ValueError(
        "GRPOTrainer: model and ref_model must both be models; got an empty holder (an empty "
        "TransformerLM or a null policy)");
  }
  if (model->same_as(*ref_model)) {
    throw ValueError(
        "GRPOTrainer: ref_model is the policy itself, so the leash would move with it and measure "
        "nothing. Pass a separate copy of the starting point (the same checkpoint loaded twice; "
        "for LoRA, the same model with the adapters off)");
  }
  if (!tokenizer) throw ValueError("GRPOTrainer: tokenizer is null; pass a TextCodec");
  if (!verifier) throw ValueError("GRPOTrainer: verifier is empty; pass a reward function");
  optimizer = std::make_unique<g2c::nn::AdamW>(model->trainable_parameters(), options.lr());
}

const Task& GRPOTrainer::next_task() {
  std::uniform_int_distribution<std::size_t> pick(0, tasks.size() - 1);
  return tasks[pick(task_rng)];
}

GRPOHistory GRPOTrainer::train(std::int64_t max_steps, std::int64_t log_every) {
  if (max_steps < 0 || log_every < 0) {
    throw ValueError(
        fmt::format("GRPOTrainer::train: max_steps and log_every must be >= 0; got {} and {}",
                    max_steps, log_every));
  }
  GRPOHistory history;
  for (std::int64_t step = 0; step < max_steps; ++step) {
    history.append(train_step());
    if (log_every > 0 && (step + 1) % log_every == 0) {
      double sum = 0.0;
      for (auto i = history.size() - static_cast<std::size_t>(log_every); i < history.size(); ++i) {
        sum += history.mean_reward[i];
      }
      std::cout << fmt::format("step {:>5}  reward(last {}) = {:.3f}\n", step + 1, log_every,
                               sum / static_cast<double>(log_every));
    }
  }
  return history;
}

double GRPOTrainer::evaluate(const std::vector<Task>& pool, const Verifier& scorer) {
  if (pool.empty()) throw ValueError("GRPOTrainer::evaluate: no tasks to evaluate");
  const Verifier& score = scorer ? scorer : verifier;
  torch::NoGradGuard no_grad;
  const auto greedy = g2c::sampling::GenerateOptions().temperature(0.0).eos_id(options.eos_id());
  double total = 0.0;
  for (const auto& task : pool) {
    const auto prompt_ids = torch::tensor(tokenizer->encode(task.prompt), torch::kLong);  // (P)
    const auto full = model->generate(prompt_ids, options.max_new_tokens(), greedy);
    const auto* first = full.data_ptr<std::int64_t>();
    total += score(task, tokenizer->decode({first + prompt_ids.numel(), first + full.numel()}));
  }
  return total / static_cast<double>(pool.size());
}

}  // namespace g2c::rl
