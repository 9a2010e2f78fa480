// What the Beyond moe training programs share: the recipe of one run, module 10's data, and the
// training loop of a dense or MoE model through module 10's Trainer (the language-model loss, plus
// α times the balance loss for MoE), recording validation loss, time a step and every expert's
// share of its block's tokens over training.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "g2c/moe/model.h"
#include "g2c/nn/module.h"
#include "g2c/pretraining/data.h"

namespace g2c::exercises::moe {

/// One run's recipe and model shape (ShakespeareLM-0.8M's by default).
struct RunConfig {
  std::int64_t steps = 300, batch_size = 8, context_length = 128, warmup_steps = 30;
  std::int64_t embedding_dim = 128, num_layers = 4, num_heads = 4;
  std::int64_t experts = 8, top_k = 1;
  std::int64_t eval_every = 25, eval_iters = 8, final_eval_batches = 32;
  double max_lr = 1e-3, balance = 0.01;
  bool lesson_loop = false;  // the lesson's dispatch loop instead of the sorted dispatch
};

/// What every program's result file records of the recipe: {steps, batch_size, context_length,
/// embedding_dim, num_layers, num_heads, num_experts, max_lr}; each program adds its own keys.
nlohmann::json config_json(const RunConfig& config);

/// Adds the options every program shares (--embedding-dim, --layers, --heads, --context, --batch,
/// --experts, --max-lr, --eval-every, --lesson-loop) to `app`.
void add_run_options(g2c::CommandLine& app, RunConfig& config);

/// Fits the schedule to --steps (warmup at most a tenth, evaluation at most every run's length).
void finish_config(RunConfig& config, std::int64_t steps);

/// Module 10's data: the first million characters at V 264, split 90/10, and the fixed held-out
/// batches every run's final loss is measured on.
struct Data {
  std::int64_t vocab_size = 0;
  g2c::pretraining::TokenSplit split;
  std::vector<g2c::exercises::TokenBatch> final_batches;
};
Data load_data(const RunConfig& config, std::uint64_t seed);

/// A fresh dense TransformerLM and a fresh MoETransformerLM (top_k as given) of the config's
/// shape, each drawn after seeding with `seed`.
std::shared_ptr<g2c::nn::Module> dense_model(const RunConfig& config, const Data& data,
                                             std::uint64_t seed);
g2c::moe::MoETransformerLM moe_model(const RunConfig& config, const Data& data, std::int64_t top_k,
                                     std::uint64_t seed);

/// Trains `module` (a MoETransformerLM when `moe` is set, with balance coefficient `balance`) and
/// returns its entry of a result file: {name, total_parameters, active_parameters,
/// final_val_loss, median_step_ms, history[, share_steps, shares[layer][snapshot][expert],
/// final_max_share[layer]]}.
nlohmann::json train_run(const std::string& name, const std::shared_ptr<g2c::nn::Module>& module,
                         g2c::moe::MoETransformerLMImpl* moe, double balance,
                         const RunConfig& config, const g2c::exercises::CommonOptions& options,
                         const torch::Device& device, const Data& data);

}  // namespace g2c::exercises::moe
