// Exercise 09.1 — LayerNorm on one batch: x = randn(2, 3, 8)·3 + 7 goes in with means near 7 and
// variances near 9; every one of its 6 positions comes out with mean ≈ 0 and population
// variance ≈ 1, each normalized on its own.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/transformer/layer_norm.h"

namespace exercise_09_layer_norm {

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 09, exercise 1: LayerNorm(8) on randn(2, 3, 8)·3 + 7, position by position"};
  g2c::exercises::CommonOptions options;
  options.out = "results/09-transformer";
  g2c::exercises::add_common_options(app, options);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto on = torch::TensorOptions().device(device);
    g2c::transformer::LayerNorm ln(8);
    ln->to(device);
    torch::NoGradGuard no_grad;
    const auto x = torch::randn({2, 3, 8}, on) * 3.0 + 7.0;  // (B, T, D)
    const auto y = ln(x);
    const auto flat_x = x.reshape({6, 8}), flat_y = y.reshape({6, 8});  // one row per position
    const auto mean_in = flat_x.mean(-1), var_in = flat_x.var(-1, /*unbiased=*/false);
    const auto mean_out = flat_y.mean(-1), var_out = flat_y.var(-1, /*unbiased=*/false);
    fmt::print("{:>10} {:>10} {:>10} {:>12} {:>12}\n", "position", "mean in", "var in", "mean out",
               "var out");
    for (std::int64_t p = 0; p < 6; ++p) {
      fmt::print("{:>10} {:>10.4f} {:>10.4f} {:>12.2e} {:>12.6f}\n",
                 fmt::format("({}, {})", p / 3, p % 3), mean_in[p].item<double>(),
                 var_in[p].item<double>(), mean_out[p].item<double>(), var_out[p].item<double>());
    }
    const double worst_mean = mean_out.abs().max().item<double>();
    const double worst_var = (var_out - 1.0).abs().max().item<double>();
    const bool ok = worst_mean <= 1e-5 && worst_var <= 1e-4;
    fmt::print("max |mean| = {:.2e} (≤ 1e-5), max |var - 1| = {:.2e} (≤ 1e-4): {}\n", worst_mean,
               worst_var, ok ? "normalized" : "NOT normalized");
    auto result = g2c::exercises::run_metadata("09_layer_norm", options, device);
    result["config"] = {{"shape", {2, 3, 8}}, {"scale", 3.0}, {"shift", 7.0}, {"eps", ln->eps}};
    result["positions"] = {"(0, 0)", "(0, 1)", "(0, 2)", "(1, 0)", "(1, 1)", "(1, 2)"};
    result["mean_in"] = g2c::exercises::vector_json(mean_in);
    result["var_in"] = g2c::exercises::vector_json(var_in);
    result["mean_out"] = g2c::exercises::vector_json(mean_out);
    result["var_out"] = g2c::exercises::vector_json(var_out);
    result["max_abs_mean_out"] = worst_mean;
    result["max_abs_var_out_minus_one"] = worst_var;
    result["normalized"] = ok;
    result["x"] = g2c::exercises::matrix_json(flat_x);
    result["y"] = g2c::exercises::matrix_json(flat_y);
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("layer_norm.png",
                          "LayerNorm: each row (a position) standardized on its own")
             .columns(2)
             .height(4.0)
             .add(Panel("/x")
                      .title("input x (6 positions × 8 channels)")
                      .yticklabels("/positions")
                      .xlabel("channel"))
             .add(Panel("/y")
                      .title("LayerNorm(x)")
                      .yticklabels("/positions")
                      .xlabel("channel")
                      .cmap("coolwarm"))});
    const auto path = g2c::exercises::save_result(options, "layer_norm.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_09_layer_norm
