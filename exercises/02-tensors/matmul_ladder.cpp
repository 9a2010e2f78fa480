// Exercise 02.1 — the matmul ladder: the same C = A @ B of square n x n matrices, climbing from the
// textbook loops to LibTorch on every core (and a GPU when there is one). For each rung and size it
// reports seconds, GFLOP/s (2 n^3 flops per product), the speed-up over the rung below, and the
// share of this machine's measured arithmetic peak (exercises/02-tensors/peak.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "exercises/02-tensors/peak.h"
#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/timing.h"
#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/tensors/matmul.h"

namespace exercise_02_matmul_ladder {

namespace {

using g2c::exercises::synchronize;

using g2c::tensors::Matrix;
using g2c::tensors::Nested;

struct Config {
  std::vector<std::int64_t> sizes{64, 128, 256, 512, 1024};  // square n; the loops grow as n^3
  bool large = false;                   // also n = 2048 (minutes for the loops, so they skip it)
  double max_loop_seconds = 20;         // skip a hand-written rung whose predicted time is longer
  double min_seconds = 0.3;             // repeat a product until this much time is measured
  std::string torch_dtype = "float32";  // LibTorch rungs: the dtype models train in
};

/// One rung of the ladder: what it runs and its measurements, size by size.
struct Rung {
  std::string key;    // JSON name: loops, vectorized, torch_1_thread, torch_all_threads, device
  std::string label;  // for tables and the figure
  std::string dtype;
  int threads = 1;
  double peak_gflops = 0.0;  // the measured peak it is compared with (0: none measured)
  std::vector<std::int64_t> sizes;
  std::vector<double> seconds, gflops, share_of_peak, max_error;
  std::vector<std::int64_t> skipped;
  std::vector<std::string> skip_reasons;
};

Rung make_rung(std::string key, std::string label, std::string dtype, int threads, double peak) {
  Rung rung;
  rung.key = std::move(key);
  rung.label = std::move(label);
  rung.dtype = std::move(dtype);
  rung.threads = threads;
  rung.peak_gflops = peak;
  return rung;
}

/// Median seconds of one call of `run`, repeated until `min_seconds` have been measured (at least
/// once, at most 25 times), after one untimed warm-up call when a call is cheap.
double time_call(const std::function<void()>& run, double min_seconds, double first_estimate) {
  if (first_estimate < 1.0) run();  // warm-up: caches, allocator, LibTorch's thread pool
  std::vector<double> times;
  double total = 0.0;
  while (times.empty() || (total < min_seconds && times.size() < 25)) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times.push_back(elapsed);
    total += elapsed;
  }
  return g2c::exercises::median(times);
}

double gflops_of(std::int64_t n, double seconds) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / seconds /
         1e9;
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 02: the matmul ladder - textbook loops, i-k-j loops, LibTorch on one thread and on "
      "all of them, and the GPU, against this machine's measured peak"};
  g2c::exercises::CommonOptions options;
  options.out = "results/02-tensors";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--sizes", config.sizes, "Square sizes n to time");
  app.add_flag("--large", config.large, "Also time n = 2048");
  app.add_option("--max-loop-seconds", config.max_loop_seconds,
                 "Skip a hand-written rung at a size whose predicted time is longer");
  app.add_option("--min-seconds", config.min_seconds,
                 "Repeat each product until this much time is measured (median reported)");
  app.add_option("--torch-dtype", config.torch_dtype, "dtype of the LibTorch rungs")
      .one_of({"float32", "float64"});
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.large &&
        std::find(config.sizes.begin(), config.sizes.end(), 2048) == config.sizes.end()) {
      config.sizes.push_back(2048);
    }
    std::sort(config.sizes.begin(), config.sizes.end());
    for (const auto n : config.sizes) {
      if (n < 1 || n > 8192) throw g2c::ValueError(fmt::format("--sizes: {} is not in 1..8192", n));
    }
    const auto device = g2c::exercises::prepare(options);
    const int all_threads = std::max(1, static_cast<int>(torch::get_num_threads()));
    const auto torch_dtype = config.torch_dtype == "float64" ? torch::kDouble : torch::kFloat;
    const bool torch_fp64 = torch_dtype == torch::kDouble;

    // The ceiling: fused multiply-adds in the widest registers, no memory traffic.
    if (!options.quiet) fmt::print(stderr, "measuring this machine's peak...\n");
    const auto peak64 = g2c::exercises::measure_peak(1, /*fp64=*/true);
    const auto peak32 = g2c::exercises::measure_peak(1, /*fp64=*/false);
    const auto peak_torch_1 = torch_fp64 ? peak64 : peak32;
    // All threads: the one-thread peak times the threads. Cores do not share their multiply-add
    // units, so this is the ceiling; measuring it directly instead reads low whenever another
    // program holds a core (it is measured too, and recorded beside it).
    const double peak_all = all_threads * peak_torch_1.gflops;
    const auto peak_all_measured = g2c::exercises::measure_peak(all_threads, torch_fp64);
    fmt::print(
        "measured peak ({}), one thread: float64 {:.1f} GFLOP/s, float32 {:.1f} GFLOP/s; {} on {} "
        "threads: {:.1f} GFLOP/s ({:.1f} measured together)\n",
        peak32.kernel, peak64.gflops, peak32.gflops, config.torch_dtype, all_threads, peak_all,
        peak_all_measured.gflops);

    std::vector<Rung> rungs{
        make_rung("loops", "loops i-j-k (matmul_loops)", "float64", 1, peak64.gflops),
        make_rung("vectorized", "loops i-k-j (matmul_vectorized)", "float64", 1, peak64.gflops),
        make_rung("torch_1_thread", "LibTorch, 1 thread", config.torch_dtype, 1,
                  peak_torch_1.gflops),
        make_rung("torch_all_threads", fmt::format("LibTorch, {} threads", all_threads),
                  config.torch_dtype, all_threads, peak_all)};
    if (!device.is_cpu()) {
      rungs.push_back(make_rung("device",
                                fmt::format("LibTorch on {}", g2c::nn::device_name(device)),
                                config.torch_dtype, 0, 0.0));
    }

    for (const auto n : config.sizes) {
      const auto A64 = torch::randn({n, n}, torch::kDouble);
      const auto B64 = torch::randn({n, n}, torch::kDouble);
      const auto C64 = torch::matmul(A64, B64);  // what every rung is checked against
      const Matrix A = Matrix::from_tensor(A64), B = Matrix::from_tensor(B64);
      const Nested A_rows = A.to_nested(), B_rows = B.to_nested();
      const auto A_t = A64.to(torch_dtype), B_t = B64.to(torch_dtype);
      for (auto& rung : rungs) {
        // A hand-written rung's time grows as n^3: predict it from the last size it ran.
        if ((rung.key == "loops" || rung.key == "vectorized") && !rung.sizes.empty()) {
          const double ratio = static_cast<double>(n) / static_cast<double>(rung.sizes.back());
          const double predicted = rung.seconds.back() * ratio * ratio * ratio;
          if (predicted > config.max_loop_seconds) {
            rung.skipped.push_back(n);
            rung.skip_reasons.push_back(
                fmt::format("predicted {:.0f} s > --max-loop-seconds {:.0f}", predicted,
                            config.max_loop_seconds));
            fmt::print(
                "n={:<5} {:<34} skipped: would take about {:.0f} s (--max-loop-seconds "
                "{:.0f})\n",
                n, rung.label, predicted, config.max_loop_seconds);
            continue;
          }
          if (!options.quiet && predicted > 2.0) {
            fmt::print(stderr, "n={} {}: about {:.0f} s...\n", n, rung.label, predicted);
          }
        }
        torch::Tensor result;
        std::function<void()> run;
        double estimate = 0.0;
        if (!rung.seconds.empty()) {
          const double ratio = static_cast<double>(n) / static_cast<double>(rung.sizes.back());
          estimate = rung.seconds.back() * ratio * ratio * ratio;
        }
        if (rung.key == "loops") {
          run = [&] {
            result = Matrix::from_nested(g2c::tensors::matmul_loops(A_rows, B_rows)).to_tensor();
          };
        } else if (rung.key == "vectorized") {
          run = [&] { result = g2c::tensors::matmul_vectorized(A, B).to_tensor(); };
        } else if (rung.key == "device") {
          const auto A_d = A_t.to(device), B_d = B_t.to(device);
          synchronize(device);
          run = [&, A_d, B_d] {
            result = g2c::tensors::matmul_torch(A_d, B_d);
            synchronize(device);
          };
        } else {
          torch::set_num_threads(rung.threads);
          run = [&] { result = g2c::tensors::matmul_torch(A_t, B_t); };
        }
        const double seconds = time_call(run, config.min_seconds, estimate);
        torch::set_num_threads(all_threads);
        const double error = (result.cpu().to(torch::kDouble) - C64).abs().max().item<double>();
        const double rate = gflops_of(n, seconds);
        rung.sizes.push_back(n);
        rung.seconds.push_back(seconds);
        rung.gflops.push_back(rate);
        rung.share_of_peak.push_back(rung.peak_gflops > 0 ? rate / rung.peak_gflops : 0.0);
        rung.max_error.push_back(error);
        fmt::print("n={:<5} {:<34} {:>10.4f} s {:>9.2f} GFLOP/s", n, rung.label, seconds, rate);
        if (rung.peak_gflops > 0)
          fmt::print(" {:>6.1f} % of peak", 100.0 * rate / rung.peak_gflops);
        fmt::print("   max |error| {:.1e}\n", error);
      }
    }

    // Speed-ups between neighbouring rungs, at every size both ran.
    nlohmann::json speedups = nlohmann::json::array();
    fmt::print("\nspeed-up over the rung below:\n");
    for (std::size_t r = 1; r < rungs.size(); ++r) {
      const Rung& low = rungs[r - 1];
      const Rung& high = rungs[r];
      std::vector<std::int64_t> sizes;
      std::vector<double> factors;
      for (std::size_t i = 0; i < high.sizes.size(); ++i) {
        const auto found = std::find(low.sizes.begin(), low.sizes.end(), high.sizes[i]);
        if (found == low.sizes.end()) continue;
        sizes.push_back(high.sizes[i]);
        factors.push_back(low.seconds[static_cast<std::size_t>(found - low.sizes.begin())] /
                          high.seconds[i]);
      }
      std::string line;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        line += fmt::format("  n={} x{:.1f}", sizes[i], factors[i]);
      }
      fmt::print("  {} -> {}:{}\n", low.label, high.label, line);
      speedups.push_back(
          {{"from", low.key}, {"to", high.key}, {"sizes", sizes}, {"factor", factors}});
    }

    auto result = g2c::exercises::run_metadata("02_matmul_ladder", options, device);
    result["config"] = {{"sizes", config.sizes},
                        {"large", config.large},
                        {"max_loop_seconds", config.max_loop_seconds},
                        {"min_seconds", config.min_seconds},
                        {"torch_dtype", config.torch_dtype},
                        {"threads", all_threads}};
    result["peak"] = {{"kernel", peak32.kernel},
                      {"float64_1_thread_gflops", peak64.gflops},
                      {"float32_1_thread_gflops", peak32.gflops},
                      {"torch_all_threads_gflops", peak_all},
                      {"torch_all_threads_measured_gflops", peak_all_measured.gflops},
                      {"threads", all_threads},
                      {"hardware_threads", std::thread::hardware_concurrency()}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto rate =
        Figure::line("matmul_ladder.png", "The matmul ladder: C = A @ B, n x n", "n", "GFLOP/s")
            .hline(peak64.gflops, "peak, float64, 1 thread")
            .hline(peak_all, fmt::format("peak, {}, {} threads", config.torch_dtype, all_threads))
            .logx()
            .logy();
    auto duration = Figure::line("matmul_ladder_seconds.png", "Seconds per product (n^3 growth)",
                                 "n", "seconds")
                        .logx()
                        .logy();
    result["rungs"] = nlohmann::json::object();
    for (const auto& rung : rungs) {
      result["rungs"][rung.key] = {{"label", rung.label},
                                   {"dtype", rung.dtype},
                                   {"threads", rung.threads},
                                   {"peak_gflops", rung.peak_gflops},
                                   {"sizes", rung.sizes},
                                   {"seconds", rung.seconds},
                                   {"gflops", rung.gflops},
                                   {"share_of_peak", rung.share_of_peak},
                                   {"max_abs_error", rung.max_error},
                                   {"skipped_sizes", rung.skipped},
                                   {"skip_reasons", rung.skip_reasons}};
      const auto at = "/rungs/" + rung.key;
      rate.add(Series(rung.label, at + "/sizes", at + "/gflops").style("-"));
      duration.add(Series(rung.label, at + "/sizes", at + "/seconds").style("-"));
    }
    result["speedups"] = speedups;
    result["figures"] = g2c::exercises::figures({rate, duration});
    const auto path = g2c::exercises::save_result(options, "matmul_ladder.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_02_matmul_ladder
