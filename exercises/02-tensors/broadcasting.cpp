// Exercise 02.2 — broadcasting, shape by shape: a few element-wise ops on TinyArray (your
// broadcast_shapes and elementwise) next to LibTorch's, and the classic silent bug — a (B,)
// prediction minus a (B, 1) target is (B, B), not (B,), and the "loss" comes out wrong without any
// error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"

namespace exercise_02_broadcasting {

namespace {

using g2c::tensors::format_shape;
using g2c::tensors::Shape;
using g2c::tensors::TinyArray;

struct Config {
  std::int64_t batch = 4;  // B of the classic bug
};

/// 1, 2, 3, ... laid out in `shape`.
TinyArray counting(const Shape& shape) {
  std::vector<double> values(static_cast<std::size_t>(g2c::tensors::shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i + 1);
  return TinyArray(values, shape);
}

torch::Tensor to_tensor(const TinyArray& a) {
  return torch::tensor(a.data(), torch::kDouble).reshape(torch::IntArrayRef(a.shape()));
}

std::string torch_shape(const torch::Tensor& t) {
  return format_shape(Shape(t.sizes().begin(), t.sizes().end()));
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 02: broadcasting shape by shape with TinyArray and LibTorch, and the (B,) + (B, 1) "
      "bug"};
  g2c::exercises::CommonOptions options;
  options.out = "results/02-tensors";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--batch", config.batch, "B for the (B,) + (B, 1) bug").range(2, 64);
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    const std::vector<std::pair<Shape, Shape>> cases{
        {{2, 3}, {3}},        // a bias added to every row
        {{2, 3}, {2, 1}},     // a per-row value added across the columns
        {{1, 3}, {2, 1}},     // both stretch
        {{2, 1, 4}, {3, 4}},  // padded on the left, then stretched
        {{}, {2, 2}},         // a scalar
        {{2, 3}, {2}},        // cannot broadcast: 3 faces 2
    };
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [shape_a, shape_b] : cases) {
      const TinyArray a = counting(shape_a), b = counting(shape_b);
      nlohmann::json row{{"a_shape", shape_a}, {"b_shape", shape_b}};
      std::string torch_result;
      try {
        torch_result = torch_shape(to_tensor(a) + to_tensor(b));
        row["torch_shape"] = torch_result;
      } catch (const c10::Error&) {
        torch_result = "error";
        row["torch_shape"] = nullptr;
      }
      try {
        const TinyArray sum = a + b;
        row["shape"] = sum.shape();
        row["sum"] = sum.to_nested();
        row["matches_torch"] = torch::equal(to_tensor(sum), to_tensor(a) + to_tensor(b));
        fmt::print("{:>10} + {:<8} -> {:<10} LibTorch {:<10}  {}\n", format_shape(shape_a),
                   format_shape(shape_b), format_shape(sum.shape()), torch_result,
                   sum.to_nested().dump());
      } catch (const g2c::ValueError& error) {
        row["shape"] = nullptr;
        row["error"] = error.what();
        row["matches_torch"] = torch_result == "error";
        fmt::print("{:>10} + {:<8} -> ValueError  LibTorch {:<10}  {}\n", format_shape(shape_a),
                   format_shape(shape_b), torch_result, error.what());
      }
      rows.push_back(row);
    }

    // The classic bug: a model's (B,) predictions against (B, 1) targets.
    const std::int64_t B = config.batch;
    const auto predictions = torch::randn({B}, torch::kDouble);  // (B,)
    const auto targets = torch::randn({B, 1}, torch::kDouble);   // (B, 1)
    const auto wrong = predictions - targets;                    // (B, B)!
    const auto right = predictions - targets.squeeze(1);         // (B,)
    const double wrong_loss = wrong.pow(2).mean().item<double>();
    const double right_loss = right.pow(2).mean().item<double>();
    const TinyArray tiny_wrong = TinyArray(std::vector<double>(predictions.data_ptr<double>(),
                                                               predictions.data_ptr<double>() + B),
                                           {B}) +
                                 TinyArray(std::vector<double>(B, 0.0), {B, 1});
    fmt::print("\nthe classic bug: predictions {} - targets {} = {} (B = {}), not ({},)\n",
               torch_shape(predictions), torch_shape(targets), torch_shape(wrong), B, B);
    fmt::print("  mean squared error over {} numbers: {:.4f}   the intended one over {}: {:.4f}\n",
               wrong.numel(), wrong_loss, right.numel(), right_loss);
    fmt::print(
        "  TinyArray agrees: {} + {} -> {}. Fix: squeeze the target to ({},) (or unsqueeze "
        "the prediction) and check shapes before the loss.\n",
        format_shape(Shape{B}), format_shape(Shape{B, 1}), format_shape(tiny_wrong.shape()), B);

    auto result = g2c::exercises::run_metadata("02_broadcasting", options, device);
    result["config"] = {{"batch", B}};
    result["cases"] = rows;
    result["classic_bug"] = {{"predictions_shape", Shape{B}},
                             {"targets_shape", Shape{B, 1}},
                             {"difference_shape", tiny_wrong.shape()},
                             {"wrong_loss", wrong_loss},
                             {"right_loss", right_loss}};
    std::vector<std::vector<double>> wrong_rows(static_cast<std::size_t>(B));
    for (std::int64_t i = 0; i < B; ++i) {
      const auto row = wrong[i].contiguous();
      wrong_rows[static_cast<std::size_t>(i)].assign(row.data_ptr<double>(),
                                                     row.data_ptr<double>() + B);
    }
    const auto right_row = right.contiguous();
    result["classic_bug"]["wrong_difference"] = wrong_rows;  // (B, B)
    result["classic_bug"]["right_difference"] = {
        std::vector<double>(right_row.data_ptr<double>(), right_row.data_ptr<double>() + B)};
    using g2c::exercises::Figure;
    using g2c::exercises::Panel;
    result["figures"] = g2c::exercises::figures(
        {Figure::heatmaps("broadcasting_bug.png", "")
             .columns(2)
             .add(Panel("/classic_bug/right_difference")
                      .title(fmt::format("intended: prediction - target, ({},)", B))
                      .xlabel("example i")
                      .cmap("coolwarm"))
             .add(Panel("/classic_bug/wrong_difference")
                      .title(fmt::format("the bug: ({},) - ({}, 1) = ({}, {})", B, B, B, B))
                      .xlabel("prediction i")
                      .ylabel("target j")
                      .cmap("coolwarm"))});
    const auto path = g2c::exercises::save_result(options, "broadcasting.json", result);
    g2c::exercises::plot_result(options, path);
  });
}

}  // namespace exercise_02_broadcasting
