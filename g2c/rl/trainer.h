// Beyond module rl — GRPOTrainer: sample, verify, advantage, update.
//
// Dimension legend: K group_size, P prompt tokens, n_k the k-th completion's length.
// There is no dataset: each step manufactures its batch by sampling the current model, so
// generation dominates the wall clock, and samples must be fresh — a completion drawn by an older
// policy is not what this estimator assumes. One train_step:
//   task     = next_task()                                  uniform over the pool, seeded
//   group    = sample_group(model, tokenizer, task.prompt, K, temperature 1, the generator)
//   rewards  = verifier(task, text) per completion          (K)
//   A        = group_advantages(rewards)                    (K)
//   all zero (or an empty completion): skip — no update, kl and sample_entropy NaN
//   logp     = completion_log_prob(model, prompt ++ c_k, P) per row, with autograd     (K)
//   ref_logp = the same through ref_model, without                                    (K)
//   kl       = mean(eᵈ − d − 1), d = ref_logp − logp        the leash's distance, a diagnostic
//   entropy  = mean(−logp / n_k)                            sampled-token entropy per token
//   loss     = grpo_loss(logp, ref_logp, A, kl_coef); zero_grad; backward; AdamW step
// The sampling temperature is fixed at 1: the update rescores the completions with the model's
// untempered probabilities, which are the probabilities they were drawn with only at 1 (another
// temperature would need an off-policy correction this simplified loop does not have).
// The reference is never updated: no optimizer holds its parameters, and its log-probabilities are
// computed without autograd. Policy and reference are Policies (policy.h): module 09's
// TransformerLM (the constructor taking two of them wraps each), or SmolLM2 with LoRA adapters on
// and the same model with them off.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>
#include "g2c/core/torch.h"

#include "g2c/inference/local.h"
#include "g2c/nn/optim.h"
#include "g2c/rl/policy.h"
#include "g2c/rl/sample.h"
#include "g2c/rl/verifiers.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::rl {

/// GRPOTrainer's settings, builder style: GRPOOptions().group_size(8).lr(1e-4).max_new_tokens(12).
struct GRPOOptions {
  TORCH_ARG(std::int64_t, group_size) = 8;  // K completions per prompt per step, >= 2
  /// AdamW's learning rate: RL compounds (each step's samples come from the last step's policy),
  /// so start about a third of an SFT rate.
  TORCH_ARG(double, lr) = 1e-5;
  TORCH_ARG(double, kl_coef) = 0.1;  // β, the leash; 0 drops it
  TORCH_ARG(std::int64_t, max_new_tokens) = 64;
  /// Must be 1 (see above); an option only so that another value is refused with a reason.
  TORCH_ARG(double, temperature) = 1.0;
  TORCH_ARG(std::optional<std::int64_t>, eos_id) = std::nullopt;  // ends a completion
  TORCH_ARG(std::uint64_t, seed) = 0;  // seeds the task draws and the sampling generator
};

/// What one train_step reports (Python's dict of five floats).
struct GRPOStepMetrics {
  double loss = 0.0;         // the group's loss before the update; 0 when skipped
  double mean_reward = 0.0;  // the group's mean reward (skipped or not)
  double kl = std::numeric_limits<double>::quiet_NaN();  // mean(eᵈ − d − 1); NaN when skipped
  /// mean over the group of −logp / n_k: how surprising the sampled tokens are to the policy (a
  /// collapse diagnostic, not the vocabulary-wide entropy); NaN when skipped.
  double sample_entropy = std::numeric_limits<double>::quiet_NaN();
  /// 1.0 when the group was degenerate and no update ran, else 0.0 (a float, so that a history's
  /// mean is the share of skipped steps).
  double skipped = 0.0;

  /// {"loss", "mean_reward", "kl", "sample_entropy", "skipped"}; NaN is written as null (a gap in
  /// a plot, not a false zero).
  nlohmann::json to_json() const;
};

/// train()'s record: one entry per step attempted, skipped steps included.
struct GRPOHistory {
  std::vector<double> loss, mean_reward, kl, sample_entropy, skipped;

  void append(const GRPOStepMetrics& metrics);
  std::size_t size() const { return loss.size(); }
  /// The five series by name, NaN as null.
  nlohmann::json to_json() const;
};

class GRPOTrainer {
 public:
  /// Checks, in this order and before any model is used: ValueError for no tasks, for a
  /// temperature other than 1 (the message says "temperature=1.0"), for group_size < 2, for an
  /// empty model or ref_model holder, for ref_model the same model as model (a reference that
  /// moves with the policy measures nothing: pass a copy, e.g. the checkpoint loaded twice) and for
  /// a null tokenizer or verifier. Then builds module 03b's AdamW(lr) over the policy's trainable
  /// parameters (requires_grad), and seeds the task draws (std::mt19937_64) and the sampling
  /// generator (a CPU at::Generator) with options.seed.
  GRPOTrainer(g2c::transformer::TransformerLM model, g2c::transformer::TransformerLM ref_model,
              std::shared_ptr<const g2c::inference::TextCodec> tokenizer, std::vector<Task> tasks,
              Verifier verifier, GRPOOptions options = GRPOOptions());

  /// The same for any two Policies (policy.h), e.g. llama_lora_policy(lora, true) and
  /// llama_lora_policy(lora, false): "the same object" is Policy::same_as, and the optimizer
  /// holds model->trainable_parameters().
  GRPOTrainer(std::shared_ptr<Policy> model, std::shared_ptr<Policy> ref_model,
              std::shared_ptr<const g2c::inference::TextCodec> tokenizer, std::vector<Task> tasks,
              Verifier verifier, GRPOOptions options = GRPOOptions());

  /// A task drawn uniformly from the pool with the trainer's seeded generator.
  const Task& next_task();

  /// One rollout step (the loop above): returns the metrics; step_count + 1 when the policy was
  /// updated, unchanged when the group was skipped.
  GRPOStepMetrics train_step();

  /// max_steps rollout steps, skipped ones included (step_count counts the updates). Every
  /// `log_every` steps (0: never) prints the mean reward of the last log_every steps. ValueError
  /// for max_steps < 0 or log_every < 0.
  GRPOHistory train(std::int64_t max_steps, std::int64_t log_every = 10);

  /// The mean reward of greedy completions (temperature 0: what the model does, not what it can
  /// luck into) of the tasks of `pool` under `scorer` (empty: the training verifier; another one
  /// audits a flawed training reward against the intended one), without autograd. evaluate()
  /// scores the training pool. ValueError for an empty pool.
  double evaluate(const std::vector<Task>& pool, const Verifier& scorer = Verifier());
  double evaluate() { return evaluate(tasks); }

  std::shared_ptr<Policy> model;      // the policy, trained
  std::shared_ptr<Policy> ref_model;  // the frozen reference of the leash
  std::shared_ptr<const g2c::inference::TextCodec> tokenizer;
  std::vector<Task> tasks;
  Verifier verifier;
  GRPOOptions options;
  std::unique_ptr<g2c::nn::AdamW> optimizer;  // over the policy's trainable parameters
  std::mt19937_64 task_rng;                   // draws the tasks
  at::Generator generator;                    // draws the samples (CPU)
  std::int64_t step_count = 0;                // optimizer updates so far
};

}  // namespace g2c::rl
