// Beyond moe, exercise 2 — dense against MoE at matched active parameters. A fresh dense model of
// ShakespeareLM-0.8M's shape and a MoE model of the same dimensions with E 8 experts per block and
// k 1 (about 5.4 times the parameters, the dense model's per token plus the routers) learn module
// 10's data through module 10's Trainer: the same seed, the same batches, the same steps, schedule
// and AdamW; the MoE loss is the language-model loss plus α times the balance loss. Reported:
// validation loss against steps, time per step, and every expert's share of its layer's tokens over
// training.
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/batches.h"
#include "exercises/common/cli.h"
#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "exercises/common/figures.h"
#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/moe/model.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/training/clip.h"
#include "g2c/transformer/transformer_lm.h"

namespace exercise_beyond_moe_matched_active {

namespace {

using Clock = std::chrono::steady_clock;
using g2c::exercises::Figure;
using g2c::exercises::Series;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;

struct Config {
  std::int64_t steps = 300, batch_size = 8, context_length = 128, warmup_steps = 30;
  std::int64_t embedding_dim = 128, num_layers = 4, num_heads = 4;
  std::int64_t experts = 8, top_k = 1;
  std::int64_t eval_every = 25, eval_iters = 8, final_eval_batches = 32;
  double max_lr = 1e-3, balance = 0.01;
  bool lesson_loop = false;
};

/// Trains `model` (a MoETransformerLM when `moe` is set) and returns its entry of the result.
nlohmann::json train(const std::string& name, const std::shared_ptr<g2c::nn::Module>& module,
                     g2c::moe::MoETransformerLMImpl* moe, const Config& config,
                     const g2c::exercises::CommonOptions& options, const torch::Device& device,
                     const g2c::pretraining::TokenSplit& split,
                     const std::vector<g2c::exercises::TokenBatch>& final_batches) {
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
      const auto balance = moe->load_balancing_loss();
      loss = lm_loss + config.balance * balance;
      extra["balance_loss"] = balance.item<double>();
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

  std::int64_t total = 0;
  for (const auto& p : model.parameters()) total += p.numel();
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

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe, exercise 2: a dense ShakespeareLM-0.8M-shaped model against MoE E 8, k 1 at\n"
      "the same dimensions, the same batches and steps through module 10's Trainer; validation\n"
      "loss, time per step and every expert's share of its layer's tokens over training. Writes\n"
      "matched_active.json and matched_active_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  Config config;
  options.steps = config.steps;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--embedding-dim", config.embedding_dim, "D of both models").range(8, 4096);
  app.add_option("--layers", config.num_layers, "Blocks of both models").range(1, 64);
  app.add_option("--heads", config.num_heads, "Attention heads (must divide D)").range(1, 64);
  app.add_option("--context", config.context_length, "Tokens per sequence").range(8, 4096);
  app.add_option("--batch", config.batch_size, "Sequences per step").range(1, 4096);
  app.add_option("--experts", config.experts, "E of the MoE model").range(1, 256);
  app.add_option("--top-k", config.top_k, "k of the MoE model").range(1, 256);
  app.add_option("--balance", config.balance, "α, the balance loss's coefficient")
      .range(0.0, 100.0);
  app.add_option("--max-lr", config.max_lr, "Peak learning rate of both runs").range(1e-6, 1.0);
  app.add_option("--eval-every", config.eval_every, "Steps between evaluations").range(1, 100000);
  app.add_flag("--lesson-loop", config.lesson_loop,
               "Dispatch with the lesson's loop over experts (your MoEFeedForward::forward) "
               "instead of the sorted dispatch");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    config.steps = options.steps;
    config.warmup_steps = std::min(config.warmup_steps, config.steps / 10);
    config.eval_every = std::min(config.eval_every, config.steps);

    const std::string text = g2c::exercises::load_tinyshakespeare().substr(0, 1'000'000);
    const auto tokenizer = g2c::exercises::course_tokenizer("bpe", text, /*vocab_size=*/0);
    const auto ids = torch::tensor(tokenizer.encode(text), torch::kLong);
    const auto split = g2c::pretraining::split_token_stream(ids, /*train_fraction=*/0.9);
    const g2c::exercises::WindowSampler val_windows(split.val, config.context_length,
                                                    config.batch_size,
                                                    g2c::exercises::TargetRule::kNextToken, 0);
    const auto final_batches = val_windows.fixed(config.final_eval_batches, options.seed);

    torch::manual_seed(options.seed);
    g2c::transformer::TransformerLM dense(tokenizer.size(), config.embedding_dim, config.num_layers,
                                          config.num_heads, config.context_length);
    torch::manual_seed(options.seed);
    g2c::moe::MoETransformerLM moe(tokenizer.size(), config.embedding_dim, config.num_layers,
                                   config.num_heads, config.context_length, config.experts,
                                   config.top_k, /*hidden_dim=*/0,
                                   /*sorted_dispatch=*/!config.lesson_loop);
    std::int64_t dense_parameters = 0;
    for (const auto& p : dense->parameters()) dense_parameters += p.numel();
    fmt::print("dense: {} parameters; MoE E {}, k {}: {} parameters, {} active per token\n",
               dense_parameters, config.experts, config.top_k, moe->total_parameter_count(),
               moe->active_parameter_count());
    std::fflush(stdout);

    auto runs = nlohmann::json::array();
    runs.push_back(train("dense", std::static_pointer_cast<g2c::nn::Module>(dense.ptr()), nullptr,
                         config, options, device, split, final_batches));
    runs.push_back(train(fmt::format("MoE E {} k {}", config.experts, config.top_k),
                         std::static_pointer_cast<g2c::nn::Module>(moe.ptr()), moe.get(), config,
                         options, device, split, final_batches));
    for (const auto& run : runs) {
      fmt::print(
          "{:<12} {:>9} parameters ({:>9} active): validation loss {:.4f}, {:.1f} ms a step\n",
          run["name"].get<std::string>(), run["total_parameters"].get<std::int64_t>(),
          run["active_parameters"].get<std::int64_t>(), run["final_val_loss"].get<double>(),
          run["median_step_ms"].get<double>());
    }
    fmt::print("largest expert share per layer at the end (1/E = {:.3f}): {}\n",
               1.0 / static_cast<double>(config.experts), runs[1]["final_max_share"].dump());

    auto result = g2c::exercises::run_metadata("beyond_moe_matched_active", options, device);
    result["config"] = {{"steps", config.steps},
                        {"batch_size", config.batch_size},
                        {"context_length", config.context_length},
                        {"embedding_dim", config.embedding_dim},
                        {"num_layers", config.num_layers},
                        {"num_heads", config.num_heads},
                        {"num_experts", config.experts},
                        {"top_k", config.top_k},
                        {"balance", config.balance},
                        {"max_lr", config.max_lr},
                        {"dispatch", config.lesson_loop ? "lesson loop" : "sorted"},
                        {"final_eval_batches", config.final_eval_batches}};
    result["runs"] = runs;
    auto loss =
        Figure::line("matched_active_loss.png", "Validation loss at matched active parameters",
                     "step", "validation loss");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      loss.add(Series(runs[r]["name"], fmt::format("/runs/{}/history/val_step", r),
                      fmt::format("/runs/{}/history/val_loss", r))
                   .marker("o"));
    }
    std::vector<Figure> figures = {loss};
    for (std::int64_t l = 0; l < config.num_layers;
         l += std::max<std::int64_t>(1, config.num_layers - 1)) {
      auto shares = Figure::line(fmt::format("matched_active_shares_layer{}.png", l),
                                 fmt::format("Each expert's share of block {}'s tokens", l), "step",
                                 "share of the assignments");
      for (std::int64_t e = 0; e < config.experts; ++e) {
        // shares[l][snapshot][e]: a column of the JSON, as its own series.
        std::vector<double> column;
        for (const auto& snapshot : runs[1]["shares"][l]) column.push_back(snapshot[e]);
        shares.add(Series(fmt::format("expert {}", e), "/runs/1/share_steps", column));
      }
      shares.hline(1.0 / static_cast<double>(config.experts), "1/E");
      figures.push_back(shares);
    }
    result["figures"] = g2c::exercises::figures(figures);
    const auto path = g2c::exercises::save_result(options, "matched_active.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_matched_active
