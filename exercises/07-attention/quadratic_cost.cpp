// Exercise 07.5 — the quadratic cost of attention: time and memory of SelfAttention(128) on
// (1, T, 128) as T doubles, the fitted log-log slope (-> 2 once the T×T part dominates), and the
// same for LibTorch's fused at::scaled_dot_product_attention.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/attention/self_attention.h"
#include "g2c/core/errors.h"
#include "g2c/core/memory.h"

namespace exercise_07_quadratic_cost {

namespace {

/// Least-squares slope of log(y) against log(x) over the points with x >= from.
double log_log_slope(const std::vector<std::int64_t>& x, const std::vector<double>& y,
                     std::int64_t from) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] < from) continue;
    const double lx = std::log(static_cast<double>(x[i])), ly = std::log(y[i]);
    n += 1, sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return n >= 2 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : std::nan("");
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 07, exercise 5: attention's cost grows with T squared"};
  g2c::exercises::CommonOptions options;
  options.out = "results/07-attention";
  std::vector<std::int64_t> lengths{64, 128, 256, 512, 1024, 2048, 4096};
  std::int64_t dim = 128;
  int repeats = 3;
  std::int64_t fit_from = 512;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--lengths", lengths, "Sequence lengths T, increasing");
  app.add_option("--dim", dim, "Embedding dimension D");
  app.add_option("--repeats", repeats, "Timed runs per T (the median is kept)").positive();
  app.add_option("--fit-from", fit_from, "Fit the slope over T >= this");
  return g2c::run_cli(app, argc, argv, [&] {
    if (!std::is_sorted(lengths.begin(), lengths.end()))
      throw g2c::ValueError("--lengths must be increasing");
    const auto device = g2c::exercises::prepare(options);
    g2c::attention::SelfAttention attention(dim);
    attention->to(device);
    torch::NoGradGuard no_grad;
    std::vector<double> module_seconds, fused_seconds, module_rss, weights_megabytes;
    fmt::print("{:>6} {:>12} {:>12} {:>14} {:>14}\n", "T", "module (ms)", "fused (ms)",
               "weights (MB)", "peak RSS (MB)");
    for (const auto t : lengths) {
      const auto x = torch::randn({1, t, dim}, torch::TensorOptions().device(device));
      module_seconds.push_back(1e-3 *
                               g2c::exercises::median_ms([&] { attention(x); }, repeats, device));
      module_rss.push_back(g2c::peak_resident_mib());
      const auto q = attention->q_proj(x), k = attention->k_proj(x), v = attention->v_proj(x);
      fused_seconds.push_back(1e-3 * g2c::exercises::median_ms(
                                         [&] {
                                           attention->out_proj(at::scaled_dot_product_attention(
                                               q, k, v, {}, 0.0, /*is_causal=*/true));
                                         },
                                         repeats, device));
      weights_megabytes.push_back(static_cast<double>(t * t * 4) / (1024.0 * 1024.0));
      fmt::print("{:>6} {:>12.2f} {:>12.2f} {:>14.1f} {:>14.0f}\n", t, 1e3 * module_seconds.back(),
                 1e3 * fused_seconds.back(), weights_megabytes.back(), module_rss.back());
    }
    const double module_slope = log_log_slope(lengths, module_seconds, fit_from);
    const double fused_slope = log_log_slope(lengths, fused_seconds, fit_from);
    fmt::print("log-log slope of time against T (T >= {}): module {:.2f}, fused {:.2f}\n", fit_from,
               module_slope, fused_slope);

    auto result = g2c::exercises::run_metadata("07_quadratic_cost", options, device);
    result["config"] = {
        {"lengths", lengths}, {"embedding_dim", dim}, {"repeats", repeats}, {"fit_from", fit_from}};
    result["length"] = lengths;
    result["module_seconds"] = module_seconds;
    result["fused_seconds"] = fused_seconds;
    result["weights_megabytes"] = weights_megabytes;
    result["peak_rss_megabytes"] = module_rss;
    result["slope"] = {{"module", module_slope}, {"fused", fused_slope}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("quadratic_cost_time.png",
                      fmt::format("Forward time against T (slopes: module {:.2f}, fused {:.2f})",
                                  module_slope, fused_slope),
                      "T", "seconds (median)")
             .logx()
             .logy()
             .add(Series("g2c SelfAttention", "/length", "/module_seconds").marker("o"))
             .add(Series("at::scaled_dot_product_attention", "/length", "/fused_seconds")
                      .marker("s")),
         Figure::line("quadratic_cost_memory.png", "Memory against T", "T", "MB")
             .logx()
             .logy()
             .add(Series("T×T weights tensor", "/length", "/weights_megabytes").marker("o"))
             .add(Series("process peak RSS", "/length", "/peak_rss_megabytes").marker("s"))});
    const auto path = g2c::exercises::save_result(options, "quadratic_cost.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_07_quadratic_cost
