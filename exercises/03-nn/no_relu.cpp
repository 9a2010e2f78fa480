// Exercise 03.3 — remove the nonlinearity: Linear -> Linear collapses to one linear map and cannot
// separate the moons, whatever the hidden size. Both models' curves in one JSON and plot.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/nn/activations.h"
#include "g2c/nn/linear.h"
#include "g2c/nn/sequential.h"
#include "g2c/nn/training.h"
#include "toy_data.h"

namespace exercise_03_no_relu {

namespace {

struct Config {
  std::int64_t points = 400;
  double noise = 0.15;
  std::int64_t hidden = 16;
  double lr = 0.5;
  std::int64_t every = 25;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03, exercise 3: the same classifier with and without ReLU"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03-nn";
  options.steps = 1500;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--hidden", config.hidden, "Hidden units");
  app.add_option("--lr", config.lr, "Learning rate");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto data = g2c::exercises::make_moons(config.points, config.noise, 0.0, options.seed);
    nlohmann::json runs;
    for (const bool relu : {true, false}) {
      torch::manual_seed(options.seed);  // identical initial layers for a fair comparison
      g2c::nn::Sequential model =
          relu ? g2c::nn::Sequential(g2c::nn::Linear(2, config.hidden), g2c::nn::ReLU(),
                                     g2c::nn::Linear(config.hidden, 2))
               : g2c::nn::Sequential(g2c::nn::Linear(2, config.hidden),
                                     g2c::nn::Linear(config.hidden, 2));
      model->to(device);
      const std::string name = relu ? "with_relu" : "without_relu";
      const auto curves = g2c::exercises::train_with_curves(
          *model, data, nullptr, options.steps, config.every, config.lr, 0.0, options.quiet, name);
      fmt::print("{:>13}: final loss {:.4f}, accuracy {:.1f}%\n", name, curves.train_loss.back(),
                 100 * curves.train_accuracy.back());
      runs[name] = g2c::exercises::to_json(curves);
    }
    auto result = g2c::exercises::run_metadata("03_no_relu", options, device);
    result["config"] = {{"points", config.points}, {"noise", config.noise},
                        {"hidden", config.hidden}, {"lr", config.lr},
                        {"steps", options.steps},  {"every", config.every}};
    result["runs"] = runs;
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("no_relu_loss.png", "With and without ReLU: loss", "step", "cross-entropy")
             .add(Series("with ReLU", "/runs/with_relu/step", "/runs/with_relu/train_loss"))
             .add(Series("without ReLU", "/runs/without_relu/step",
                         "/runs/without_relu/train_loss")),
         Figure::line("no_relu_accuracy.png", "With and without ReLU: accuracy", "step", "accuracy")
             .add(Series("with ReLU", "/runs/with_relu/step", "/runs/with_relu/train_accuracy"))
             .add(Series("without ReLU", "/runs/without_relu/step",
                         "/runs/without_relu/train_accuracy"))});
    const auto path = g2c::exercises::save_result(options, "no_relu.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03_no_relu
