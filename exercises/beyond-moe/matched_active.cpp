// Beyond moe, exercise 2 — dense against MoE at matched active parameters. A fresh dense model of
// ShakespeareLM-0.8M's shape and a MoE model of the same dimensions with E 8 experts per block and
// k 1 (about 5.4 times the parameters, the dense model's per token plus the routers) learn module
// 10's data through module 10's Trainer: the same seed, the same batches, the same steps, schedule
// and AdamW; the MoE loss is the language-model loss plus α times the balance loss. Reported:
// validation loss against steps, time per step, and every expert's share of its layer's tokens over
// training.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-moe/moe_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/lora/inject.h"

namespace exercise_beyond_moe_matched_active {

using g2c::exercises::Figure;
using g2c::exercises::Series;

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe, exercise 2: a dense ShakespeareLM-0.8M-shaped model against MoE E 8, k 1 at\n"
      "the same dimensions, the same batches and steps through module 10's Trainer; validation\n"
      "loss, time per step and every expert's share of its layer's tokens over training. Writes\n"
      "matched_active.json and matched_active_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::moe::RunConfig config;
  options.steps = config.steps;
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::moe::add_run_options(app, config);
  app.add_option("--top-k", config.top_k, "k of the MoE model").range(1, 256);
  app.add_option("--balance", config.balance, "α, the balance loss's coefficient")
      .range(0.0, 100.0);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    g2c::exercises::moe::finish_config(config, options.steps);
    const auto data = g2c::exercises::moe::load_data(config, options.seed);
    const auto dense = g2c::exercises::moe::dense_model(config, data, options.seed);
    auto moe = g2c::exercises::moe::moe_model(config, data, config.top_k, options.seed);
    const std::int64_t dense_parameters = g2c::lora::count_parameters(*dense).total;
    fmt::print("dense: {} parameters; MoE E {}, k {}: {} parameters, {} active per token\n",
               dense_parameters, config.experts, config.top_k, moe->total_parameter_count(),
               moe->active_parameter_count());
    std::fflush(stdout);

    auto runs = nlohmann::json::array();
    runs.push_back(g2c::exercises::moe::train_run("dense", dense, nullptr, 0.0, config, options,
                                                  device, data));
    runs.push_back(
        g2c::exercises::moe::train_run(fmt::format("MoE E {} k {}", config.experts, config.top_k),
                                       std::static_pointer_cast<g2c::nn::Module>(moe.ptr()),
                                       moe.get(), config.balance, config, options, device, data));
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
