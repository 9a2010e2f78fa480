// Exercise 09.2 — the FFN is per-position: FeedForward(8, 32), seed 0; change position 2 of a
// (1, 4, 8) input and only output position 2 changes. (Attention, by contrast, mixes positions.)
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/transformer/ffn.h"

namespace exercise_09_ffn_per_position {

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 09, exercise 2: change one position, see which FFN outputs move"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  std::int64_t changed = 2;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--position", changed, "Which of the 4 positions to change").range(0, 3);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto on = torch::TensorOptions().device(device);
    g2c::transformer::FeedForward ffn(8, 32);
    ffn->to(device);
    torch::NoGradGuard no_grad;
    const auto x1 = torch::randn({1, 4, 8}, on);
    auto x2 = x1.clone();
    x2[0][changed] = torch::randn({8}, on);
    const auto change = (ffn(x2) - ffn(x1)).abs().amax(/*dim=*/-1)[0];  // (T): max |Δ| per position
    fmt::print("{:>10} {:>18}\n", "position", "max |Δ output|");
    for (std::int64_t t = 0; t < 4; ++t) {
      fmt::print("{:>10} {:>18.3e}{}\n", t, change[t].item<double>(),
                 t == changed ? "   <- the changed position" : "");
    }
    double others = 0.0;
    for (std::int64_t t = 0; t < 4; ++t) {
      if (t != changed) others = std::max(others, change[t].item<double>());
    }
    const bool per_position = others <= 1e-6 && change[changed].item<double>() > 1e-4;
    fmt::print("other positions moved by at most {:.1e}: {}\n", others,
               per_position ? "the FFN is per-position" : "positions leak into each other");
    auto result = g2c::exercises::run_metadata("09_ffn_per_position", options, device);
    result["config"] = {{"embedding_dim", 8},
                        {"hidden_dim", 32},
                        {"shape", {1, 4, 8}},
                        {"changed_position", changed}};
    result["positions"] = {0, 1, 2, 3};
    result["max_abs_change"] = g2c::exercises::vector_json(change);
    result["max_change_elsewhere"] = others;
    result["per_position"] = per_position;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar("ffn_per_position.png",
                     fmt::format("FFN output change after editing position {}", changed),
                     "position", "max |Δ output|")
             .add(Series("", "/positions", "/max_abs_change"))});
    const auto path = g2c::exercises::save_result(options, "ffn_per_position.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_ffn_per_position
