#include "exercises/beyond-moe/moe_runs.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/timing.h"
#include "exercises/common/training.h"
#include "g2c/core/progress.h"
#include "g2c/lora/inject.h"
#include "g2c/pretraining/loss.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/training/clip.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises::moe {

namespace {
using Clock = std::chrono::steady_clock;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;
}  // namespace

void add_run_options(g2c::CommandLine& app, RunConfig& config) {
  app.add_option("--embedding-dim", config.embedding_dim, "D of every model").range(8, 4096);
  app.add_option("--layers", config.num_layers, "Blocks of every model").range(1, 64);
  app.add_option("--heads", config.num_heads, "Attention heads (must divide D)").range(1, 64);
  app.add_option("--context", config.context_length, "Tokens per sequence").range(8, 4096);
  app.add_option("--batch", config.batch_size, "Sequences per step").range(1, 4096);
  app.add_option("--experts", config.experts, "E of the MoE models").range(1, 256);
  app.add_option("--max-lr", config.max_lr, "Peak learning rate of every run").range(1e-6, 1.0);
  app.add_option("--eval-every", config.eval_every, "Steps between evaluations").range(1, 100000);
  app.add_flag("--lesson-loop", config.lesson_loop,
               "Dispatch with the lesson's loop over experts (your MoEFeedForward::forward) "
               "instead of the sorted dispatch");
}

nlohmann::json config_json(const RunConfig& config) {
  return {{"steps", config.steps},
          {"batch_size", config.batch_size},
          {"context_length", config.context_length},
          {"embedding_dim", config.embedding_dim},
          {"num_layers", config.num_layers},
          {"num_heads", config.num_heads},
          {"num_experts", config.experts},
          {"max_lr", config.max_lr}};
}

void finish_config(RunConfig& config, std::int64_t steps) {
  config.steps = steps;
  config.warmup_steps = std::min(config.warmup_steps, config.steps / 10);
  config.eval_every = std::min(config.eval_every, config.steps);
}

Data load_data(const RunConfig& config, std::uint64_t seed) {
  const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);
  const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, /*vocab_size=*/0);
  const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
  Data data;
  data.vocab_size = tokenizer.size();
  data.split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
  const g2c::exercises::WindowSampler val_windows(data.split.val, config.context_length,
                                                  config.batch_size,
                                                  g2c::exercises::TargetRule::kNextToken, 0);
  data.final_batches = val_windows.fixed(config.final_eval_batches, seed);
  return data;
}

std::shared_ptr<g2c::nn::Module> dense_model(const RunConfig& config, const Data& data,
                                             std::uint64_t seed) {
  torch::manual_seed(seed);
  g2c::transformer::TransformerLM model(data.vocab_size, config.embedding_dim, config.num_layers,
                                        config.num_heads, config.context_length);
  return std::static_pointer_cast<g2c::nn::Module>(model.ptr());
}

g2c::moe::MoETransformerLM moe_model(const RunConfig& config, const Data& data, std::int64_t top_k,
                                     std::uint64_t seed) {
  torch::manual_seed(seed);
  return g2c::moe::MoETransformerLM(data.vocab_size, config.embedding_dim, config.num_layers,
                                    config.num_heads, config.context_length, config.experts, top_k,
                                    /*hidden_dim=*/0, /*sorted_dispatch=*/!config.lesson_loop);
}

nlohmann::json train_run(const std::string& name, const std::shared_ptr<g2c::nn::Module>& module,
                         g2c::moe::MoETransformerLMImpl* moe, double balance,
                         const RunConfig& config, const g2c::exercises::CommonOptions& options,
                         const torch::Device& device, const Data& data) {
  const auto& split = data.split;
  const auto& final_batches = data.final_batches;
  auto trainer_options =
      TrainerOptions(config.batch_size, config.context_length, config.steps, config.max_lr)
          .min_lr(0.1 * config.max_lr)
          .warmup_steps(config.warmup_steps)
          .grad_clip(1.0)
          .eval_every(config.eval_every)
          .eval_iters(config.eval_iters)
          .log_every(config.eval_every)
          .generator(at::make_generator<at::CPUGeneratorImpl>(options.seed))
          .device(device.str())
          .optimizer("adamw");
  Trainer trainer(module, trainer_options);
  g2c::nn::Module& model = *module;
  // shares[layer][snapshot][expert]: each expert's share of its layer's N·k assignments.
  std::vector<std::vector<std::vector<double>>> shares(moe ? moe->num_layers : 0);
  std::vector<std::int64_t> share_steps;
  std::vector<double> step_ms;

  // One step: module 10's order, with the balance loss added for the MoE model.
  const auto one_step = [&]() -> g2c::pretraining::StepMetrics {
    const auto start = Clock::now();
    const auto [x, y] = g2c::pretraining::get_lm_batch(
        split.train, config.batch_size, config.context_length, trainer.options.generator());
    const double lr = trainer.lr();
    trainer.optimizer->lr = lr;
    trainer.optimizer->zero_grad();
    const auto lm_loss =
        g2c::pretraining::lm_cross_entropy(model.forward(x.to(device)), y.to(device));
    auto loss = lm_loss;
    g2c::pretraining::NamedMetrics extra;
    if (moe) {
      const auto balance_loss = moe->load_balancing_loss();
      loss = lm_loss + balance * balance_loss;
      extra["balance_loss"] = balance_loss.item<double>();
      extra["lm_loss"] = lm_loss.item<double>();
      if (trainer.step % config.eval_every == 0 || trainer.step + 1 == config.steps) {
        share_steps.push_back(trainer.step);
        for (std::int64_t l = 0; l < moe->num_layers; ++l) {
          const auto indices = moe->blocks[l]->moe_ffn->last_indices.flatten();
          const auto counts = torch::bincount(indices, {}, moe->num_experts).to(torch::kDouble);
          const auto share = (counts / static_cast<double>(indices.numel())).contiguous();
          shares[l].emplace_back(share.data_ptr<double>(),
                                 share.data_ptr<double>() + share.numel());
        }
      }
    }
    loss.backward();
    const double grad_norm = g2c::training::clip_grad_norm_(model.parameters(), 1.0);
    trainer.optimizer->step();
    trainer.step += 1;
    step_ms.push_back(1e3 * std::chrono::duration<double>(Clock::now() - start).count());
    return {lm_loss.item<double>(), lr, grad_norm, extra};
  };
  g2c::Progress progress(name, config.steps, !options.quiet);
  g2c::pretraining::TrainingHistory history;
  trainer.run_loop(
      one_step, [&] { return g2c::pretraining::EvalMetrics(trainer.evaluate(split.val)); }, history,
      g2c::pretraining::RunOptions().on_log([&](const g2c::pretraining::LogEvent& event) {
        progress.update(event.step + 1, event.val_loss
                                            ? fmt::format("loss {:.3f} val {:.3f}",
                                                          event.train_loss, *event.val_loss)
                                            : fmt::format("loss {:.3f}", event.train_loss));
      }));
  const double final_val = g2c::exercises::mean_loss(model, final_batches);
  progress.finish(fmt::format("final validation loss {:.4f}", final_val));

  const std::int64_t total = g2c::lora::count_parameters(model).total;
  nlohmann::json entry = {{"name", name},
                          {"total_parameters", total},
                          {"active_parameters", moe ? moe->active_parameter_count() : total},
                          {"final_val_loss", final_val},
                          {"median_step_ms", g2c::exercises::median(step_ms)},
                          {"history", history.to_json()}};
  if (moe) {
    entry["share_steps"] = share_steps;
    entry["shares"] = shares;
    // The largest share of any expert in each layer at the end: 1/E is perfect balance.
    nlohmann::json largest = nlohmann::json::array();
    for (const auto& layer : shares) {
      largest.push_back(*std::max_element(layer.back().begin(), layer.back().end()));
    }
    entry["final_max_share"] = largest;
  }
  return entry;
}

}  // namespace g2c::exercises::moe
