// Beyond moe, exercise 4 — how many experts a token should use. MoE E 8 of ShakespeareLM-0.8M's
// shape at k 1, 2 and 4, and the dense model, on the same batches: validation loss against active
// parameters (k 2 and 4 use two and four experts' compute per token) and time a step.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/beyond-moe/moe_runs.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"

namespace exercise_beyond_moe_k_sweep {

using g2c::exercises::Figure;
using g2c::exercises::Series;

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Beyond moe, exercise 4: MoE E 8 at k 1, 2 and 4 against the dense model on the same\n"
      "batches; validation loss against active parameters, and time a step. Writes k_sweep.json\n"
      "and k_sweep.png."};
  g2c::exercises::CommonOptions options;
  options.out = "results/beyond-moe";
  g2c::exercises::moe::RunConfig config;
  options.steps = config.steps;
  std::vector<int> ks = {1, 2, 4};
  g2c::exercises::add_common_options(app, options);
  g2c::exercises::moe::add_run_options(app, config);
  app.add_option("--ks", ks, "Values of k to train, each from 1 to E");
  app.add_option("--balance", config.balance, "α, the balance loss's coefficient")
      .range(0.0, 100.0);
  return g2c::run_cli(app, argc, argv, [&] {
    for (const int k : ks) {
      if (k < 1 || k > config.experts) {
        throw g2c::ValueError(
            fmt::format("--ks takes values from 1 to E = {}, got {}", config.experts, k));
      }
    }
    const auto device = g2c::exercises::prepare(options);
    g2c::exercises::moe::finish_config(config, options.steps);
    const auto data = g2c::exercises::moe::load_data(config, options.seed);
    auto runs = nlohmann::json::array();
    runs.push_back(g2c::exercises::moe::train_run(
        "dense", g2c::exercises::moe::dense_model(config, data, options.seed), nullptr, 0.0, config,
        options, device, data));
    for (const int k : ks) {
      auto model = g2c::exercises::moe::moe_model(config, data, k, options.seed);
      runs.push_back(g2c::exercises::moe::train_run(
          fmt::format("E {} k {}", config.experts, k),
          std::static_pointer_cast<g2c::nn::Module>(model.ptr()), model.get(), config.balance,
          config, options, device, data));
    }
    nlohmann::json active = nlohmann::json::array(), loss = nlohmann::json::array();
    for (const auto& run : runs) {
      active.push_back(run["active_parameters"]);
      loss.push_back(run["final_val_loss"]);
      fmt::print(
          "{:<8} {:>9} parameters ({:>9} active): validation loss {:.4f}, {:.1f} ms a step\n",
          run["name"].get<std::string>(), run["total_parameters"].get<std::int64_t>(),
          run["active_parameters"].get<std::int64_t>(), run["final_val_loss"].get<double>(),
          run["median_step_ms"].get<double>());
    }
    auto result = g2c::exercises::run_metadata("beyond_moe_k_sweep", options, device);
    result["config"] = g2c::exercises::moe::config_json(config);
    result["config"]["ks"] = ks;
    result["config"]["balance"] = config.balance;
    result["runs"] = runs;
    result["points"] = {{"active_parameters", active}, {"final_val_loss", loss}};
    result["figures"] = g2c::exercises::figures(
        {Figure::scatter("k_sweep.png", "Validation loss against active parameters",
                         "active parameters per token", "validation loss (fixed batches)")
             .add(Series("", "/points/active_parameters", "/points/final_val_loss").size(40))});
    const auto path = g2c::exercises::save_result(options, "k_sweep.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_beyond_moe_k_sweep
