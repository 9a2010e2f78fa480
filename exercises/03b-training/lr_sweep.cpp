// Exercise 03b.1 — a learning-rate sweep: the same model, data, seed and step budget, trained with
// SGD at five learning rates, to see a run crawl, learn and diverge.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/nn/training.h"
#include "xor_runs.h"

namespace exercise_03b_lr_sweep {

namespace {

struct Config {
  std::vector<double> lrs{1e-4, 1e-3, 1e-2, 1e-1, 1.0};  // powers of ten around SGD's usual range
  std::int64_t hidden = 32;
  std::int64_t per_corner = 128;  // 512 points: 409 train, 103 validation
  double noise = 0.18;
};

/// The sweep's three words, by a rule simple enough to check by eye on the curves.
std::string verdict(const g2c::exercises::RunRecord& record) {
  const double first = record.train_loss.front(), last = record.train_loss.back();
  const bool val_worse = !(record.val_loss.back() < record.val_loss.front());
  if (record.stopped_at || !(last < first) || val_worse) return "diverges";
  if (last > 0.5 * first) return "crawls";
  return "learns";
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{"Module 03b, exercise 1: an SGD learning-rate sweep on the XOR data"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  options.steps = 300;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--lrs", config.lrs, "Learning rates to compare");
  app.add_option("--hidden", config.hidden, "Hidden units");
  return g2c::run_cli(app, argc, argv, [&] {
    if (config.lrs.empty()) throw g2c::ValueError("--lrs needs at least one learning rate");
    const auto device = g2c::exercises::prepare(options);
    const auto data = g2c::exercises::to_device(
        g2c::exercises::make_xor_data(config.per_corner, config.noise, options.seed), device);

    nlohmann::json runs = nlohmann::json::array();
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    auto loss = Figure::line("lr_sweep_loss.png",
                             "SGD learning-rate sweep (solid: train, dashed: validation)", "step",
                             "cross-entropy")
                    .logy()
                    .width(8)
                    .height(5);
    std::vector<std::string> labels;
    std::vector<double> accuracies;
    for (std::size_t i = 0; i < config.lrs.size(); ++i) {
      const double lr = config.lrs[i];
      torch::manual_seed(options.seed);  // the same initial weights for every learning rate
      auto model = g2c::nn::build_2d_classifier(config.hidden);
      model->to(device);
      const g2c::exercises::OptimizerSetting setting{fmt::format("lr={}", lr), "sgd", lr, 0.0};
      const auto record = g2c::exercises::train_run(*model, data, setting, options.steps);
      const auto final_val = g2c::exercises::evaluate(*model, data.x_val, data.y_val);
      const std::string word = verdict(record);
      fmt::print("lr={:<7} train {:>8.4f}  val {:>8.4f}  val acc {:.3f}  {:<8}  ({})\n", lr,
                 record.train_loss.back(), record.val_loss.back(), final_val.accuracy, word,
                 g2c::exercises::describe_end(record, options.steps));
      nlohmann::json run = {
          {"lr", lr},
          {"label", setting.label},
          {"step", g2c::exercises::step_numbers(record.train_loss.size())},
          {"train_loss", g2c::exercises::series_json(record.train_loss)},
          {"val_loss", g2c::exercises::series_json(record.val_loss)},
          {"final_train_loss", g2c::exercises::series_json({record.train_loss.back()})[0]},
          {"final_val_loss", g2c::exercises::series_json({record.val_loss.back()})[0]},
          {"val_accuracy", final_val.accuracy},
          {"stopped_at", record.stopped_at ? nlohmann::json(*record.stopped_at) : nullptr},
          {"end", g2c::exercises::describe_end(record, options.steps)},
          {"verdict", word}};
      runs.push_back(run);
      const std::string base = fmt::format("/runs/{}/", i);
      const std::string color = fmt::format("C{}", i % 10);
      loss.add(Series(fmt::format("lr={} train", lr), base + "step", base + "train_loss")
                   .color(color))
          .add(Series(fmt::format("lr={} val", lr), base + "step", base + "val_loss")
                   .color(color)
                   .style("--"));
      labels.push_back(fmt::format("{}", lr));
      accuracies.push_back(final_val.accuracy);
    }

    auto result = g2c::exercises::run_metadata("03b_lr_sweep", options, device);
    result["config"] = {
        {"lrs", config.lrs},
        {"optimizer", "sgd"},
        {"weight_decay", 0.0},
        {"model", fmt::format("Linear(2,{0}) -> ReLU -> Linear({0},2)", config.hidden)},
        {"hidden", config.hidden},
        {"steps", options.steps},
        {"per_corner", config.per_corner},
        {"noise", config.noise},
        {"train_fraction", 0.8},
        {"verdict_rule",
         "diverges: the loss became non-finite, or the training or validation loss ended no lower "
         "than it started; crawls: less than half of the first training loss is gone; learns: "
         "otherwise"}};
    result["data"] = {{"train", data.x_train.size(0)}, {"val", data.x_val.size(0)}};
    result["runs"] = runs;
    result["accuracy"] = {{"lr", labels}, {"val_accuracy", accuracies}};
    result["figures"] = g2c::exercises::figures(
        {loss, Figure::bar("lr_sweep_accuracy.png", "Validation accuracy after the run",
                           "learning rate", "validation accuracy")
                   .add(Series("", "/accuracy/lr", "/accuracy/val_accuracy"))});
    const auto path = g2c::exercises::save_result(options, "lr_sweep.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03b_lr_sweep
