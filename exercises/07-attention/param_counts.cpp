// Exercise 07.4 — how many parameters does self-attention have? 4(D² + D): four D×D projections
// with their biases, whatever the sequence length.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/attention/self_attention.h"

namespace exercise_07_param_counts {

namespace {

std::int64_t count_parameters(g2c::attention::SelfAttention& attention) {
  std::int64_t total = 0;
  for (const auto& p : attention->parameters()) total += p.numel();
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 07, exercise 4: parameter counts against D and against T"};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  std::vector<std::int64_t> dims{64, 128, 256, 512};
  std::vector<std::int64_t> lengths{16, 64, 256, 1024};
  g2c::exercises::add_common_options(app, options);
  app.add_option("--dims", dims, "Embedding dimensions D");
  app.add_option("--lengths", lengths, "Sequence lengths T (run through D = 64)");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    std::vector<std::int64_t> by_dim, formula;
    fmt::print("{:>6} {:>12} {:>14}\n", "D", "parameters", "4(D^2 + D)");
    for (const auto d : dims) {
      g2c::attention::SelfAttention attention(d);
      by_dim.push_back(count_parameters(attention));
      formula.push_back(4 * (d * d + d));
      fmt::print("{:>6} {:>12} {:>14}\n", d, by_dim.back(), formula.back());
    }
    g2c::attention::SelfAttention fixed(64);
    fixed->to(device);
    std::vector<std::int64_t> by_length;
    fmt::print("\n{:>6} {:>12}  (D = 64; the output shape follows T, the parameters do not)\n", "T",
               "parameters");
    for (const auto t : lengths) {
      torch::NoGradGuard no_grad;
      const auto output = fixed(torch::randn({1, t, 64}, torch::TensorOptions().device(device)));
      by_length.push_back(count_parameters(fixed));
      fmt::print("{:>6} {:>12}  output {}\n", t, by_length.back(), fmt::join(output.sizes(), "x"));
    }
    auto result = g2c::exercises::run_metadata("07_param_counts", options, device);
    result["config"] = {{"dims", dims}, {"lengths", lengths}, {"length_sweep_dim", 64}};
    result["by_dim"] = {{"dim", dims}, {"parameters", by_dim}, {"formula", formula}};
    result["by_length"] = {{"length", lengths}, {"parameters", by_length}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("param_counts.png", "SelfAttention parameters against D: 4(D² + D)", "D",
                      "parameters")
             .logx()
             .logy()
             .add(Series("counted", "/by_dim/dim", "/by_dim/parameters").marker("o"))
             .add(Series("4(D² + D)", "/by_dim/dim", "/by_dim/formula").style("--"))});
    const auto path = g2c::exercises::save_result(options, "param_counts.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_07_param_counts
