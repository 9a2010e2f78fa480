// Exercise 03.2 — a 2-D toy classifier (two interleaved moons): loss and accuracy curves, and the
// decision boundary on a grid.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/nn/training.h"
#include "toy_data.h"

namespace exercise_03_classifier {

namespace {

struct Config {
  std::int64_t points = 400;  // moons, half per class
  double noise = 0.15;        // enough overlap that a straight line cannot separate them
  std::int64_t hidden = 16;   // build_2d_classifier's default
  double lr = 0.5;            // full batch on a tiny model tolerates a large step
  std::int64_t every = 25;    // record curves every this many steps
  std::int64_t grid = 80;     // decision-boundary resolution
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03, exercise 2: a two-moons classifier (Linear -> ReLU -> Linear)"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03-nn";
  options.steps = 1500;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--points", config.points, "Training points");
  app.add_option("--hidden", config.hidden, "Hidden units");
  app.add_option("--lr", config.lr, "Learning rate");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto data = g2c::exercises::make_moons(config.points, config.noise, 0.0, options.seed);
    auto model = g2c::nn::build_2d_classifier(config.hidden);
    model->to(device);
    const auto curves =
        g2c::exercises::train_with_curves(*model, data, nullptr, options.steps, config.every,
                                          config.lr, 0.0, options.quiet, "classifier");
    fmt::print("final loss {:.4f}, accuracy {:.1f}%\n", curves.train_loss.back(),
               100 * curves.train_accuracy.back());

    auto result = g2c::exercises::run_metadata("03_classifier", options, device);
    result["config"] = {{"points", config.points}, {"noise", config.noise},
                        {"hidden", config.hidden}, {"lr", config.lr},
                        {"steps", options.steps},  {"every", config.every}};
    result["curves"] = g2c::exercises::to_json(curves);
    result["grid"] = g2c::exercises::decision_grid(*model, data, config.grid);
    const auto xs = data.x.contiguous();
    std::vector<double> class0_x, class0_y, class1_x, class1_y;
    for (std::int64_t i = 0; i < data.x.size(0); ++i) {
      auto& px = data.y[i].item<std::int64_t>() == 0 ? class0_x : class1_x;
      auto& py = data.y[i].item<std::int64_t>() == 0 ? class0_y : class1_y;
      px.push_back(xs[i][0].item<double>());
      py.push_back(xs[i][1].item<double>());
    }
    result["points"] = {{"class0", {{"x", class0_x}, {"y", class0_y}}},
                        {"class1", {{"x", class1_x}, {"y", class1_y}}}};
    const auto& grid = result["grid"];
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Points;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::line("classifier_curves.png", "Two moons: training", "step", "loss / accuracy")
             .add(Series("loss", "/curves/step", "/curves/train_loss"))
             .add(Series("accuracy", "/curves/step", "/curves/train_accuracy")),
         Figure::heatmaps("classifier_boundary.png", "Decision boundary")
             .columns(1)
             .width(6)
             .height(5)
             .add(Panel("/grid/probability")
                      .title("P(class 1)")
                      .cmap("coolwarm")
                      .origin("lower")
                      .range(0, 1)
                      .extent({grid["x_min"], grid["x_max"], grid["y_min"], grid["y_max"]})
                      .add(Points("/points/class0/x", "/points/class0/y")
                               .label("class 0")
                               .color("navy"))
                      .add(Points("/points/class1/x", "/points/class1/y")
                               .label("class 1")
                               .color("darkred")))});
    const auto path = g2c::exercises::save_result(options, "classifier.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03_classifier
