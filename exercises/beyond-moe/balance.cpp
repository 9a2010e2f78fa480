// Beyond moe, exercise 3 — what the balance loss buys. MoE E 8, k 2 of ShakespeareLM-0.8M's shape
// trained three times on the same batches with the balance coefficient α at 0, at the default 0.01
// and at a hundred times it: validation loss, the balance loss itself, and the largest share any
// expert takes of its block's tokens, over training.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-moe/moe_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"

namespace exercise_beyond_moe_balance {

using g2c::exercises::Figure;
using g2c::exercises::Series;

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe, exercise 3: MoE E 8, k 2 trained with the balance coefficient at 0, 0.01 and\n"
      "1 on the same batches; validation loss, balance loss and the busiest expert's share over\n"
      "training. Writes balance.json and balance_*.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::moe::RunConfig config;
  config.top_k = 2;
  options.steps = config.steps;
  std::vector<double> alphas = {0.0, 0.01, 1.0};
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::moe::add_run_options(app, config);
  app.add_option("--top-k", config.top_k, "k of the MoE models").range(1, 256);
  app.add_option("--alphas", alphas, "Balance coefficients to train with, each >= 0");
  return g2c::run_cli(app, argc, argv, [&] {
    for (const double alpha : alphas) {
      if (!(alpha >= 0.0))
        throw g2c::ValueError(fmt::format("--alphas must be >= 0, got {}", alpha));
    }
    const auto device = g2c::exercises::prepare(options);
    g2c::exercises::moe::finish_config(config, options.steps);
    const auto data = g2c::exercises::moe::load_data(config, options.seed);
    auto runs = nlohmann::json::array();
    for (const double alpha : alphas) {
      auto model = g2c::exercises::moe::moe_model(config, data, config.top_k, options.seed);
      auto run = g2c::exercises::moe::train_run(
          fmt::format("alpha {:g}", alpha), std::static_pointer_cast<g2c::nn::Module>(model.ptr()),
          model.get(), alpha, config, options, device, data);
      run["alpha"] = alpha;
      // The busiest expert of each snapshot, over all blocks.
      std::vector<double> busiest;
      for (std::size_t s = 0; s < run["share_steps"].size(); ++s) {
        double largest = 0.0;
        for (const auto& layer : run["shares"]) {
          for (const auto& share : layer[s]) largest = std::max(largest, share.get<double>());
        }
        busiest.push_back(largest);
      }
      run["busiest_share"] = busiest;
      runs.push_back(run);
    }
    for (const auto& run : runs) {
      fmt::print(
          "alpha {:<6g} validation loss {:.4f}, final balance loss {:.3f}, busiest expert "
          "{:.1f} % of its block's tokens at the end (1/E = {:.1f} %)\n",
          run["alpha"].get<double>(), run["final_val_loss"].get<double>(),
          run["history"]["balance_loss"].back().get<double>(),
          100.0 * run["busiest_share"].back().get<double>(),
          100.0 / static_cast<double>(config.experts));
    }
    auto result = g2c::exercises::run_metadata("beyond_moe_balance", options, device);
    result["config"] = g2c::exercises::moe::config_json(config);
    result["config"]["top_k"] = config.top_k;
    result["config"]["alphas"] = alphas;
    result["runs"] = runs;
    auto busiest = Figure::line("balance_busiest.png", "The busiest expert's share of its block",
                                "step", "largest share of the assignments");
    auto balance = Figure::line("balance_loss.png", "The balance loss (1 is perfect balance)",
                                "step", "E · Σ f·P");
    auto loss = Figure::line("balance_val_loss.png", "Validation loss", "step", "validation loss");
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const std::string label = runs[r]["name"];
      busiest.add(Series(label, fmt::format("/runs/{}/share_steps", r),
                         fmt::format("/runs/{}/busiest_share", r)));
      balance.add(Series(label, fmt::format("/runs/{}/history/step", r),
                         fmt::format("/runs/{}/history/balance_loss", r)));
      loss.add(Series(label, fmt::format("/runs/{}/history/val_step", r),
                      fmt::format("/runs/{}/history/val_loss", r))
                   .marker("o"));
    }
    busiest.hline(1.0 / static_cast<double>(config.experts), "1/E");
    result["figures"] = g2c::exercises::figures({busiest, balance, loss});
    const auto path = g2c::exercises::save_result(options, "balance.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_balance
