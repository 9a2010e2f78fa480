// Exercise 01.1 — the 2-2-1 tanh network on XOR, trained with nothing but your scalar engine:
// train_xor_step's forward pass, backward() and the update. Writes the loss curve, the four
// predictions and the decision boundary over [−0.5, 1.5]².
#include <random>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/autodiff/nn.h"
#include "g2c/core/progress.h"

namespace exercise_01_xor {

using g2c::autodiff::ScalarMLP;
using g2c::autodiff::XOR_DATA;

namespace {

struct Config {
  double lr = 0.1;         // plain gradient descent on a 9-parameter model: large steps are safe
  std::int64_t grid = 81;  // the boundary picture samples grid × grid points
};

constexpr double kLow = -0.5, kHigh = 1.5;  // the picture's square, the four inputs inside it

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 01, exercise 1: train a 2-2-1 tanh network on XOR with the scalar engine"};
  g2c::exercises::CommonOptions options;
  options.out = "results/01-autodiff";
  options.steps = 500;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--lr", config.lr, "Learning rate of the gradient-descent step").positive();
  app.add_option("--grid", config.grid, "Points per side of the decision-boundary picture")
      .range(2, 1000);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);  // recorded; the engine runs on the CPU
    std::mt19937 rng(static_cast<std::mt19937::result_type>(options.seed));
    ScalarMLP model(rng);

    std::vector<double> losses;
    g2c::Progress progress("01_xor", options.steps, !options.quiet);
    for (std::int64_t step = 0; step < options.steps; ++step) {
      losses.push_back(g2c::autodiff::train_xor_step(model, config.lr));
      progress.update(step + 1, fmt::format("loss {:.4f}", losses.back()));
    }
    const double final_loss = g2c::autodiff::xor_loss(model).data();
    progress.finish(fmt::format("loss {:.4f}", final_loss));

    nlohmann::json predictions = nlohmann::json::array();
    int correct = 0;
    for (const auto& [x, y] : XOR_DATA) {
      const double out = model(x).data();
      correct += (out > 0) == (y > 0);
      predictions.push_back({{"x", x}, {"target", y}, {"output", out}});
      fmt::print("  XOR({:.0f}, {:.0f}) = {:+.0f}   network: {:+.4f}\n", x[0], x[1], y, out);
    }
    fmt::print("loss {:.4f} → {:.4f} after {} steps; {}/4 signs right\n", losses.front(),
               final_loss, options.steps, correct);

    // The network's output over the square, row by row from the bottom (y = kLow) up.
    std::vector<std::vector<double>> surface;
    for (std::int64_t row = 0; row < config.grid; ++row) {
      std::vector<double> line;
      const double y = kLow + (kHigh - kLow) * static_cast<double>(row) / (config.grid - 1);
      for (std::int64_t column = 0; column < config.grid; ++column) {
        const double x = kLow + (kHigh - kLow) * static_cast<double>(column) / (config.grid - 1);
        line.push_back(model({x, y}).data());
      }
      surface.push_back(std::move(line));
    }

    auto result = g2c::exercises::run_metadata("01_xor", options, device);
    result["config"] = {{"steps", options.steps}, {"lr", config.lr}, {"grid", config.grid}};
    result["losses"] = losses;
    result["final_loss"] = final_loss;
    result["predictions"] = predictions;
    result["signs_right"] = correct;
    nlohmann::json parameters = nlohmann::json::array();
    for (const auto& p : model.parameters()) parameters.push_back(p.data());
    result["parameters"] = parameters;
    result["extent"] = {kLow, kHigh, kLow, kHigh};
    result["surface"] = surface;
    nlohmann::json negative = {{"x", nlohmann::json::array()}, {"y", nlohmann::json::array()}};
    nlohmann::json positive = negative;
    for (const auto& [x, y] : XOR_DATA) {
      auto& group = y > 0 ? positive : negative;
      group["x"].push_back(x[0]);
      group["y"].push_back(x[1]);
    }
    result["points"] = {{"negative", negative}, {"positive", positive}};
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Points;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("xor_loss.png", "XOR on the scalar engine: mean squared error per step",
                      "step", "MSE")
             .logy()
             .add(Series(fmt::format("lr {}", config.lr), nullptr, "/losses")),
         Figure::heatmaps(
             "xor_boundary.png",
             fmt::format("The network's output after {} steps (black: output 0)", options.steps))
             .add(Panel("/surface")
                      .title(fmt::format("loss {:.4f}, {}/4 signs right", final_loss, correct))
                      .cmap("coolwarm")
                      .range(-1, 1)
                      .origin("lower")
                      .extent("/extent")
                      .aspect("equal")
                      .contour({0.0}, "black")
                      .add(Points("/points/negative/x", "/points/negative/y")
                               .color("navy")
                               .size(120)
                               .edgecolor("white")
                               .label("XOR = −1"))
                      .add(Points("/points/positive/x", "/points/positive/y")
                               .color("darkred")
                               .size(120)
                               .edgecolor("white")
                               .label("XOR = +1")))});
    const auto path = g2c::exercises::save_result(options, "xor.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_01_xor
