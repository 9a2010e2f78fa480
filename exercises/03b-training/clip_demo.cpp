// Exercise 03b.5 — global-norm gradient clipping on the smallest example: two parameters with
// gradients [3] and [4] (global norm 5) and max_norm 1. One shared scale keeps the direction of
// the whole gradient; clipping each tensor on its own would turn it.
#include <cmath>
#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/training/clip.h"

namespace exercise_03b_clip_demo {

namespace {

struct Config {
  std::vector<double> grads{3.0, 4.0};  // one gradient per parameter
  double max_norm = 1.0;
};

/// Two one-element parameters on `device` whose gradients are `grads`.
std::vector<torch::Tensor> parameters_with(const std::vector<double>& grads,
                                           const torch::Device& device) {
  std::vector<torch::Tensor> params;
  for (const double g : grads) {
    auto p = torch::zeros({1}, torch::TensorOptions().device(device)).requires_grad_();
    p.mutable_grad() = torch::full({1}, g, torch::TensorOptions().device(device));
    params.push_back(p);
  }
  return params;
}

/// The gradients, their global norm and the direction of the (g1, g2) vector in degrees.
nlohmann::json describe(const std::vector<torch::Tensor>& params) {
  std::vector<double> grads;
  double squared = 0.0;
  for (const auto& p : params) {
    grads.push_back(p.grad().item<double>());
    squared += grads.back() * grads.back();
  }
  return {{"grads", grads},
          {"norm", std::sqrt(squared)},
          {"angle_degrees", std::atan2(grads[1], grads[0]) * 180.0 / std::numbers::pi},
          {"arrow_x", {0.0, grads[0]}},
          {"arrow_y", {0.0, grads[1]}}};
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03b, exercise 5: global-norm gradient clipping on two gradients"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--grads", config.grads, "The two gradients").expected(2);
  app.add_option("--max-norm", config.max_norm, "Clipping threshold");
  return g2c::run_cli(app, argc, argv, [&] {
    if (!(config.max_norm > 0)) {
      throw g2c::ValueError(fmt::format("--max-norm must be > 0, got {}", config.max_norm));
    }
    const auto device = g2c::exercises::prepare(options);

    const auto global = parameters_with(config.grads, device);
    const auto before = describe(global);
    const double pre_clip_norm = g2c::training::clip_grad_norm_(global, config.max_norm);
    const auto after = describe(global);

    // The wrong way, for contrast: each tensor clipped to max_norm on its own.
    const auto separate = parameters_with(config.grads, device);
    for (const auto& p : separate) g2c::training::clip_grad_norm_({p}, config.max_norm);
    const auto per_tensor = describe(separate);

    fmt::print("gradients {}, max_norm {}\n", fmt::join(config.grads, ", "), config.max_norm);
    fmt::print("pre-clip norm (returned): {:.6g}\n", pre_clip_norm);
    fmt::print("after the global clip:    grads {:.6g}, {:.6g}  norm {:.6g}  direction {:.2f}°\n",
               after["grads"][0].get<double>(), after["grads"][1].get<double>(),
               after["norm"].get<double>(), after["angle_degrees"].get<double>());
    fmt::print("each tensor on its own:   grads {:.6g}, {:.6g}  norm {:.6g}  direction {:.2f}°\n",
               per_tensor["grads"][0].get<double>(), per_tensor["grads"][1].get<double>(),
               per_tensor["norm"].get<double>(), per_tensor["angle_degrees"].get<double>());
    fmt::print("before:                   direction {:.2f}° (one shared scale keeps it)\n",
               before["angle_degrees"].get<double>());

    std::vector<double> circle_x, circle_y;  // the max_norm ball
    for (int i = 0; i <= 180; ++i) {
      const double angle = 2 * std::numbers::pi * i / 180;
      circle_x.push_back(config.max_norm * std::cos(angle));
      circle_y.push_back(config.max_norm * std::sin(angle));
    }
    auto result = g2c::exercises::run_metadata("03b_clip_demo", options, device);
    result["config"] = {{"grads", config.grads}, {"max_norm", config.max_norm}};
    result["pre_clip_norm"] = pre_clip_norm;
    result["before"] = before;
    result["global_clip"] = after;
    result["per_tensor_clip"] = per_tensor;
    result["circle"] = {{"x", circle_x}, {"y", circle_y}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("clip_demo.png",
                      "Global-norm clipping shortens the gradient and keeps its direction",
                      "gradient of parameter 1", "gradient of parameter 2")
             .aspect("equal")
             .width(6)
             .height(6)
             .add(Series("before", "/before/arrow_x", "/before/arrow_y").marker("o"))
             .add(Series("clip_grad_norm_ (global)", "/global_clip/arrow_x", "/global_clip/arrow_y")
                      .marker("o"))
             .add(Series("each tensor on its own (wrong)", "/per_tensor_clip/arrow_x",
                         "/per_tensor_clip/arrow_y")
                      .marker("o")
                      .style("--"))
             .add(Series(fmt::format("norm = max_norm = {}", config.max_norm), "/circle/x",
                         "/circle/y")
                      .color("gray")
                      .style(":"))});
    const auto path = g2c::exercises::save_result(options, "clip_demo.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03b_clip_demo
