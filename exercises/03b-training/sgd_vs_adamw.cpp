// Exercise 03b.4 — SGD against AdamW on the same model, data and seed: validation-loss curves,
// and decision-boundary snapshots after 50, 150 and 300 steps with the misclassified validation
// points marked.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/nn/training.h"
#include "xor_runs.h"

namespace exercise_03b_sgd_vs_adamw {

namespace {

struct Config {
  std::vector<g2c::exercises::OptimizerSetting> runs{{"SGD lr=0.1", "sgd", 0.1, 0.0},
                                                     {"AdamW lr=0.003", "adamw", 3e-3, 0.01},
                                                     {"AdamW lr=0.001", "adamw", 1e-3, 0.01}};
  std::vector<std::int64_t> snapshots{50, 150, 300};
  std::int64_t grid = 160;  // decision-boundary resolution per axis
  double margin = 0.35;     // the grid spans the data plus this much on every side
  std::int64_t hidden = 32;
  std::int64_t per_corner = 128;
  double noise = 0.18;
};

struct Extent {
  double x_min, x_max, y_min, y_max;
};

/// P(class 1) on a resolution x resolution grid over `extent` (rows = y, from y_min up), rounded
/// to 0.001 to keep the file small.
torch::Tensor probability_grid(g2c::nn::Module& model, const Extent& extent,
                               std::int64_t resolution, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const auto xs = torch::linspace(extent.x_min, extent.x_max, resolution);
  const auto ys = torch::linspace(extent.y_min, extent.y_max, resolution);
  const auto mesh = torch::meshgrid({xs, ys}, "xy");  // 2 x (R_y, R_x)
  const auto points = torch::stack({mesh[0].flatten(), mesh[1].flatten()}, /*dim=*/1);  // (R², 2)
  const auto probability = torch::softmax(model(points.to(device)), /*dim=*/-1).select(1, 1);
  // Rounded in float64, so that 0.123 is written as 0.123 and not as 0.12300000339746475.
  return (probability.reshape({resolution, resolution}).to(torch::kCPU, torch::kDouble) * 1000)
      .round()
      .div(1000);
}

/// The validation points the model gets wrong: {"x": [...], "y": [...]}.
nlohmann::json misclassified(g2c::nn::Module& model, const torch::Tensor& x,
                             const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  const auto wrong = model(x).argmax(/*dim=*/-1).ne(y);
  const auto points = x.index({wrong}).to(torch::kCPU, torch::kDouble);  // (n, 2)
  return {{"x", g2c::exercises::vector_json(points.select(1, 0))},
          {"y", g2c::exercises::vector_json(points.select(1, 1))}};
}

nlohmann::json number_or_null(double value) {
  return g2c::exercises::series_json({value})[0];
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 03b, exercise 4: SGD and AdamW on the XOR data, curves and boundaries"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  options.steps = 300;
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--snapshots", config.snapshots, "Steps after which to draw the boundary");
  app.add_option("--grid", config.grid, "Boundary grid points per axis").range(20, 1000);
  app.add_option("--hidden", config.hidden, "Hidden units");
  return g2c::run_cli(app, argc, argv, [&] {
    std::sort(config.snapshots.begin(), config.snapshots.end());
    if (config.snapshots.empty() || config.snapshots.front() < 0 ||
        config.snapshots.back() > options.steps) {
      throw g2c::ValueError(
          fmt::format("--snapshots must name steps between 0 and --steps ({}), got {}",
                      options.steps, fmt::join(config.snapshots, " ")));
    }
    const auto device = g2c::exercises::prepare(options);
    const auto data = g2c::exercises::to_device(
        g2c::exercises::make_xor_data(config.per_corner, config.noise, options.seed), device);
    const auto all_x = torch::cat({data.x_train, data.x_val}).cpu();
    const auto low = std::get<0>(all_x.min(/*dim=*/0)), high = std::get<0>(all_x.max(/*dim=*/0));
    const Extent extent{
        low[0].item<double>() - config.margin, high[0].item<double>() + config.margin,
        low[1].item<double>() - config.margin, high[1].item<double>() + config.margin};

    nlohmann::json runs = nlohmann::json::array();
    nlohmann::json summary = nlohmann::json::object();
    // snapshot_index[row][column]: where the snapshot of step row, run column sits in `snapshots`.
    nlohmann::json snapshots = nlohmann::json::array();
    std::vector<std::vector<std::size_t>> snapshot_index(
        config.snapshots.size(), std::vector<std::size_t>(config.runs.size()));
    for (std::size_t column = 0; column < config.runs.size(); ++column) {
      const auto& setting = config.runs[column];
      torch::manual_seed(options.seed);  // the same initial weights for every optimizer
      auto model = g2c::nn::build_2d_classifier(config.hidden);
      model->to(device);
      auto take_snapshot = [&](std::int64_t step, g2c::nn::Module& trained) {
        for (std::size_t row = 0; row < config.snapshots.size(); ++row) {
          if (config.snapshots[row] != step) continue;
          const auto train = g2c::exercises::evaluate(trained, data.x_train, data.y_train);
          const auto val = g2c::exercises::evaluate(trained, data.x_val, data.y_val);
          summary[setting.label][std::to_string(step)] = {
              {"train_loss", number_or_null(train.loss)},
              {"val_loss", number_or_null(val.loss)},
              {"val_accuracy", val.accuracy}};
          snapshot_index[row][column] = snapshots.size();
          snapshots.push_back({{"run", setting.label},
                               {"step", step},
                               {"val_loss", number_or_null(val.loss)},
                               {"val_accuracy", val.accuracy},
                               {"probability", g2c::exercises::matrix_json(probability_grid(
                                                   trained, extent, config.grid, device))},
                               {"missed", misclassified(trained, data.x_val, data.y_val)}});
        }
      };
      take_snapshot(0, *model);  // only when 0 was asked for: the untrained model
      const auto record =
          g2c::exercises::train_run(*model, data, setting, options.steps, take_snapshot);
      const auto final_val = g2c::exercises::evaluate(*model, data.x_val, data.y_val);
      fmt::print("{:<15} final train {:.4f}  val {:.4f}  val acc {:.3f}  ({})\n", setting.label,
                 record.train_loss.back(), record.val_loss.back(), final_val.accuracy,
                 g2c::exercises::describe_end(record, options.steps));
      runs.push_back(
          {{"label", setting.label},
           {"optimizer", setting.optimizer},
           {"lr", setting.lr},
           {"weight_decay", setting.weight_decay},
           {"step", g2c::exercises::step_numbers(record.train_loss.size())},
           {"train_loss", g2c::exercises::series_json(record.train_loss)},
           {"val_loss", g2c::exercises::series_json(record.val_loss)},
           {"val_accuracy", final_val.accuracy},
           {"stopped_at", record.stopped_at ? nlohmann::json(*record.stopped_at) : nullptr},
           {"end", g2c::exercises::describe_end(record, options.steps)}});
    }

    auto result = g2c::exercises::run_metadata("03b_sgd_vs_adamw", options, device);
    nlohmann::json settings = nlohmann::json::array();
    for (const auto& s : config.runs) {
      settings.push_back({{"label", s.label},
                          {"optimizer", s.optimizer},
                          {"lr", s.lr},
                          {"weight_decay", s.weight_decay}});
    }
    result["config"] = {
        {"runs", settings},
        {"adamw_betas", {0.9, 0.999}},
        {"adamw_eps", 1e-8},
        {"model", fmt::format("Linear(2,{0}) -> ReLU -> Linear({0},2)", config.hidden)},
        {"steps", options.steps},
        {"snapshots", config.snapshots},
        {"grid", config.grid},
        {"margin", config.margin},
        {"per_corner", config.per_corner},
        {"noise", config.noise},
        {"train_fraction", 0.8}};
    result["data"] = {{"train", g2c::exercises::points_by_class(data.x_train, data.y_train)},
                      {"val", g2c::exercises::points_by_class(data.x_val, data.y_val)}};
    result["extent"] = {extent.x_min, extent.x_max, extent.y_min, extent.y_max};
    result["runs"] = runs;
    result["summary"] = summary;
    result["snapshots"] = snapshots;

    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    using g2c::exercises::Points;
    using g2c::exercises::Series;
    auto loss = Figure::line("sgd_vs_adamw_loss.png",
                             "Same model, different optimizer (solid: validation, dotted: train)",
                             "step", "cross-entropy")
                    .logy()
                    .width(8)
                    .height(5);
    for (std::size_t i = 0; i < config.runs.size(); ++i) {
      const std::string base = fmt::format("/runs/{}/", i);
      const std::string color = fmt::format("C{}", i % 10);
      loss.add(Series(config.runs[i].label + " val", base + "step", base + "val_loss").color(color))
          .add(Series(config.runs[i].label + " train", base + "step", base + "train_loss")
                   .color(color)
                   .style(":"));
    }
    // One legend: only the first panel's points are labelled.
    auto boundaries =
        Figure::heatmaps("sgd_vs_adamw_boundaries.png",
                         fmt::format("Decision boundaries after {} steps (rows); x: a "
                                     "misclassified validation point",
                                     fmt::join(config.snapshots, ", ")))
            .columns(static_cast<int>(config.runs.size()))
            .panel_size(4.1, 3.8);
    for (std::size_t row = 0; row < config.snapshots.size(); ++row) {
      for (std::size_t column = 0; column < config.runs.size(); ++column) {
        const bool first = row == 0 && column == 0;
        const auto index = snapshot_index[row][column];
        const auto& snapshot = snapshots[index];
        const std::string at = fmt::format("/snapshots/{}/", index);
        auto labelled = [&](Points points, const char* label) {
          return first ? points.label(label) : points;
        };
        const auto val_loss = snapshot["val_loss"];
        boundaries.add(
            Panel(at + "probability")
                .title(
                    fmt::format("{} · step {}", config.runs[column].label, config.snapshots[row]))
                .cmap("coolwarm")
                .alpha(0.35)
                .range(0, 1)
                .origin("lower")
                .extent(result["extent"])
                .no_colorbar()
                .aspect("equal")
                .contour({0.5}, "black")
                .legend_loc("center")  // the middle of the XOR data is empty
                .note(fmt::format(
                    "val acc {:.3f}\nval loss {}", snapshot["val_accuracy"].get<double>(),
                    val_loss.is_null() ? std::string("nan")
                                       : fmt::format("{:.3f}", val_loss.get<double>())))
                .add(labelled(Points("/data/train/class0/x", "/data/train/class0/y")
                                  .color("navy")
                                  .size(6)
                                  .alpha(0.35)
                                  .edgecolor("none"),
                              "train, class 0"))
                .add(labelled(Points("/data/train/class1/x", "/data/train/class1/y")
                                  .color("darkred")
                                  .size(6)
                                  .alpha(0.35)
                                  .edgecolor("none"),
                              "train, class 1"))
                .add(labelled(Points("/data/val/class0/x", "/data/val/class0/y")
                                  .color("navy")
                                  .size(18)
                                  .edgecolor("black"),
                              "validation, class 0"))
                .add(labelled(Points("/data/val/class1/x", "/data/val/class1/y")
                                  .color("darkred")
                                  .size(18)
                                  .edgecolor("black"),
                              "validation, class 1"))
                .add(labelled(
                    Points(at + "missed/x", at + "missed/y").color("black").marker("x").size(30),
                    "misclassified")));
      }
    }
    result["figures"] = g2c::exercises::figures({loss, boundaries});
    // One line: the snapshots carry several 160 x 160 grids.
    const auto path =
        g2c::exercises::save_result(options, "sgd_vs_adamw.json", result, /*indent=*/-1);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_03b_sgd_vs_adamw
