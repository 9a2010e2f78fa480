// Exercise 03.4 — overfitting vs weight decay: a wide network on a small set with noisy labels,
// trained with two weight_decay values; training and validation curves of both.
#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/nn/training.h"
#include "toy_data.h"

namespace exercise_03_weight_decay {

namespace {

struct Config {
  std::int64_t train_points = 40;  // small, so a wide network can memorise it
  std::int64_t val_points = 1000;  // large, so the validation curve is smooth
  double noise = 0.25;
  double label_noise = 0.1;  // flipped labels give the network something wrong to learn
  std::int64_t hidden = 128;
  double lr = 0.5;
  std::vector<double> weight_decays{0.0, 0.01};
  std::int64_t every = 50;
};

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 03, exercise 4: overfitting a small noisy set, and weight decay against it"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03-nn";
  options.steps = 4000;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--hidden", config.hidden, "Hidden units");
  app.add_option("--lr", config.lr, "Learning rate");
  app.add_option("--weight-decay", config.weight_decays, "The weight_decay values to compare");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const auto train = g2c::exercises::make_moons(config.train_points, config.noise,
                                                  config.label_noise, options.seed);
    const auto val = g2c::exercises::make_moons(config.val_points, config.noise, config.label_noise,
                                                options.seed + 1000);
    nlohmann::json runs = nlohmann::json::array();
    using g2c::exercises::Series;
    auto figure = g2c::exercises::Figure::line("weight_decay.png", "Overfitting and weight decay",
                                               "step", "cross-entropy");
    for (std::size_t i = 0; i < config.weight_decays.size(); ++i) {
      const double weight_decay = config.weight_decays[i];
      torch::manual_seed(options.seed);
      auto model = g2c::nn::build_2d_classifier(config.hidden);
      model->to(device);
      const auto curves = g2c::exercises::train_with_curves(
          *model, train, &val, options.steps, config.every, config.lr, weight_decay, options.quiet,
          fmt::format("weight_decay={}", weight_decay));
      fmt::print("weight_decay {:<6}: train loss {:.4f}, val loss {:.4f}, val accuracy {:.1f}%\n",
                 weight_decay, curves.train_loss.back(), curves.val_loss.back(),
                 100 * curves.val_accuracy.back());
      auto run = g2c::exercises::to_json(curves);
      run["weight_decay"] = weight_decay;
      runs.push_back(run);
      const std::string base = fmt::format("/runs/{}/", i);
      const std::string wd = fmt::format("wd={}", weight_decay);
      figure.add(Series("train, " + wd, base + "step", base + "train_loss"))
          .add(Series("val, " + wd, base + "step", base + "val_loss").style("--"));
    }
    auto result = g2c::exercises::run_metadata("03_weight_decay", options, device);
    result["config"] = {{"train_points", config.train_points},
                        {"val_points", config.val_points},
                        {"noise", config.noise},
                        {"label_noise", config.label_noise},
                        {"hidden", config.hidden},
                        {"lr", config.lr},
                        {"steps", options.steps},
                        {"weight_decays", config.weight_decays},
                        {"every", config.every}};
    result["runs"] = runs;
    result["figures"] = g2c::exercises::figures({figure});
    const auto path = g2c::exercises::save_result(options, "weight_decay.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03_weight_decay
