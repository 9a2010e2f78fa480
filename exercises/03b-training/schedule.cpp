// Exercise 03b.6 — the warmup + cosine learning-rate schedule, step by step: a linear ramp to
// max_lr, a cosine down to min_lr at max_steps, and min_lr from then on.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/training/schedule.h"

namespace exercise_03b_schedule {

namespace {

struct Config {
  std::int64_t warmup = 100;
  std::int64_t max_steps = 1000;
  double max_lr = 3e-4;
  double min_lr = 3e-5;
  std::int64_t after = 100;  // steps drawn past max_steps, to show the floor
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03b, exercise 6: plot the warmup + cosine learning-rate schedule"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--warmup", config.warmup, "Warmup steps");
  app.add_option("--max-steps", config.max_steps, "Step at which the decay reaches min_lr");
  app.add_option("--max-lr", config.max_lr, "Peak learning rate");
  app.add_option("--min-lr", config.min_lr, "Floor learning rate");
  app.add_option("--after", config.after, "Steps to draw past max_steps");
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.warmup < 0 || config.max_steps < 1 || config.after < 0 || !(config.max_lr > 0) ||
        !(config.min_lr >= 0 && config.min_lr <= config.max_lr)) {
      throw g2c::ValueError(fmt::format(
          "need --warmup >= 0, --max-steps >= 1, --after >= 0 and 0 <= --min-lr <= --max-lr, "
          "--max-lr > 0; got warmup {}, max_steps {}, after {}, max_lr {}, min_lr {}",
          config.warmup, config.max_steps, config.after, config.max_lr, config.min_lr));
    }
    const auto device = g2c::exercises::prepare(options);  // pure arithmetic: runs anywhere
    std::vector<std::int64_t> steps;
    std::vector<double> lrs;
    for (std::int64_t step = 0; step <= config.max_steps + config.after; ++step) {
      steps.push_back(step);
      lrs.push_back(g2c::training::cosine_with_warmup(step, config.warmup, config.max_steps,
                                                      config.max_lr, config.min_lr));
    }
    // The landmarks: the first step, the last and first steps around the end of the warmup,
    // halfway through the decay, max_steps, and the last step drawn.
    const std::vector<std::pair<std::string, std::int64_t>> landmarks{
        {"first step", 0},
        {"last warmup step", std::max<std::int64_t>(config.warmup - 1, 0)},
        {"first cosine step", config.warmup},
        {"halfway through the decay", (config.warmup + config.max_steps) / 2},
        {"max_steps", config.max_steps},
        {"held at min_lr", config.max_steps + config.after}};
    nlohmann::json table = nlohmann::json::array();
    for (const auto& [what, step] : landmarks) {
      if (step < 0 || step >= static_cast<std::int64_t>(lrs.size())) continue;
      const double lr = lrs[static_cast<std::size_t>(step)];
      fmt::print("step {:>6}  lr {:<12.6g} {}\n", step, lr, what);
      table.push_back({{"step", step}, {"lr", lr}, {"what", what}});
    }

    auto result = g2c::exercises::run_metadata("03b_schedule", options, device);
    result["config"] = {{"warmup_steps", config.warmup},
                        {"max_steps", config.max_steps},
                        {"max_lr", config.max_lr},
                        {"min_lr", config.min_lr},
                        {"after", config.after}};
    result["step"] = steps;
    result["lr"] = lrs;
    result["landmarks"] = table;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("schedule.png", "Linear warmup + cosine decay", "step", "learning rate")
             .add(Series("cosine_with_warmup", "/step", "/lr"))
             .vline(config.warmup, "end of warmup", "", "--")
             .vline(config.max_steps, "max_steps", "", ":")
             .hline(config.max_lr, "max_lr", "lightgray")
             .hline(config.min_lr, "min_lr", "darkgray")});
    const auto path = g2c::exercises::save_result(options, "schedule.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03b_schedule
