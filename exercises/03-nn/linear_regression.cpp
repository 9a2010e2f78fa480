// Exercise 03.1 — linear regression onto y = 3x + 2 with the Linear layer, MSE and SGD you wrote.
// Writes the loss curve and the recovered W and b.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/nn/training.h"

namespace exercise_03_linear_regression {

namespace {

struct Config {
  std::int64_t points = 100;  // x = linspace(-1, 1, points)
  double noise = 0.01;        // y = 3x + 2 + noise * N(0, 1), as in the course test
  double lr = 0.1;            // large enough to converge in a few hundred full-batch steps
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03, exercise 1: fit y = 3x + 2 with Linear(1, 1), MSE and SGD"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03-nn";
  options.steps = 500;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--points", config.points, "Number of samples");
  app.add_option("--noise", config.noise, "Noise standard deviation");
  app.add_option("--lr", config.lr, "Learning rate");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto x = torch::linspace(-1, 1, config.points).unsqueeze(1).to(device);  // (N, 1)
    const auto y = 3 * x + 2 + config.noise * torch::randn_like(x);                // (N, 1)
    auto [model, losses] = g2c::nn::train_linear_regression(x, y, options.steps, config.lr);
    const double w = model->W.item<double>(), b = model->b.item<double>();
    fmt::print("recovered W = {:.4f} (true 3), b = {:.4f} (true 2); final loss {:.6f}\n", w, b,
               losses.back());

    auto result = g2c::exercises::run_metadata("03_linear_regression", options, device);
    result["config"] = {{"points", config.points},
                        {"noise", config.noise},
                        {"lr", config.lr},
                        {"steps", options.steps}};
    result["losses"] = losses;
    result["W"] = w;
    result["b"] = b;
    const auto xs = x.squeeze(1).cpu(), ys = y.squeeze(1).cpu();
    result["data"] = {
        {"x", std::vector<float>(xs.data_ptr<float>(), xs.data_ptr<float>() + xs.numel())},
        {"y", std::vector<float>(ys.data_ptr<float>(), ys.data_ptr<float>() + ys.numel())},
        {"fit", {w * -1 + b, w * 1 + b}}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("linear_regression_loss.png", "Linear regression: MSE per step", "step",
                      "MSE")
             .logy()
             .add(Series("train", nullptr, "/losses")),
         Figure::scatter("linear_regression_fit.png",
                         fmt::format("Recovered y = {:.3f}x + {:.3f}", w, b), "x", "y")
             .add(Series("data", "/data/x", "/data/y"))
             .add(Series("fit (endpoints)", {-1, 1}, "/data/fit").size(60))});
    const auto path = g2c::exercises::save_result(options, "linear_regression.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03_linear_regression
