// Exercise 03b.2 — the first AdamW update of one scalar, by hand, then checked against
// AdamW::step; and the same first update for gradients of very different sizes, SGD against
// AdamW.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "exercises/common/cli.h"
#include "exercises/common/figures.h"
#include "g2c/nn/optim.h"

namespace exercise_03b_adamw_by_hand {

namespace {

struct Config {
  double p = 1.0;
  double grad = 0.1;
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  std::vector<double> scales{1e-3, 1e-1, 1e1};  // gradient sizes for the SGD/AdamW contrast
};

/// The first update of a one-element float64 parameter `p` with gradient `grad`, by `optimizer`.
template <typename MakeOptimizer>
double first_update(double p, double grad, const torch::Device& device, MakeOptimizer make) {
  const auto options = torch::TensorOptions().dtype(torch::kDouble).device(device);
  torch::Tensor param = torch::full({1}, p, options).requires_grad_();
  param.mutable_grad() = torch::full({1}, grad, options);
  auto optimizer = make(param);
  optimizer.step();
  return p - param.item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  g2c::CommandLine app{
      "Module 03b, exercise 2: one AdamW step by hand, checked against AdamW::step"};
  g2c::exercises::CommonOptions options;
  options.out = "results/03b-training";
  Config config;
  g2c::exercises::add_common_options(app, options);
  app.add_option("--p", config.p, "Parameter value");
  app.add_option("--grad", config.grad, "Its gradient");
  app.add_option("--lr", config.lr, "Learning rate");
  return g2c::run_cli(app, argc, argv, [&] {
    const auto device = g2c::exercises::prepare(options);
    // By hand, t = 1: the moments start at zero.
    const double m = (1 - config.beta1) * config.grad;
    const double v = (1 - config.beta2) * config.grad * config.grad;
    const double m_hat = m / (1 - config.beta1);  // bias correction undoes the start at zero
    const double v_hat = v / (1 - config.beta2);
    const double update = config.lr * m_hat / (std::sqrt(v_hat) + config.eps);
    const double new_p = config.p - update;

    // The same step by AdamW::step, in float64 so the two agree to rounding.
    const auto tensor_options = torch::TensorOptions().dtype(torch::kDouble).device(device);
    torch::Tensor p = torch::full({1}, config.p, tensor_options).requires_grad_();
    p.mutable_grad() = torch::full({1}, config.grad, tensor_options);
    g2c::nn::AdamW adamw({p}, config.lr, {config.beta1, config.beta2}, config.eps,
                         /*weight_decay=*/0.0);
    adamw.step();
    const double adamw_p = p.item<double>(), adamw_m = adamw.m[0].item<double>(),
                 adamw_v = adamw.v[0].item<double>();
    const double difference =
        std::max({std::abs(adamw_p - new_p), std::abs(adamw_m - m), std::abs(adamw_v - v)});
    const bool agrees = difference <= 1e-12 && adamw.step_count == 1;

    fmt::print("p = {}, grad = {}, lr = {}, betas = ({}, {}), eps = {}\n", config.p, config.grad,
               config.lr, config.beta1, config.beta2, config.eps);
    fmt::print("{:>8} {:>14} {:>14}\n", "", "by hand", "AdamW::step");
    fmt::print("{:>8} {:>14.6g} {:>14.6g}\n", "m", m, adamw_m);
    fmt::print("{:>8} {:>14.6g} {:>14.6g}\n", "v", v, adamw_v);
    fmt::print("{:>8} {:>14.6g}\n", "m_hat", m_hat);
    fmt::print("{:>8} {:>14.6g}\n", "v_hat", v_hat);
    fmt::print("{:>8} {:>14.6g} {:>14.6g}\n", "update", update, config.p - adamw_p);
    fmt::print("{:>8} {:>14.11g} {:>14.11g}\n", "new p", new_p, adamw_p);
    fmt::print("{}\n", agrees
                           ? fmt::format("AdamW::step agrees (max difference {:.1e})", difference)
                           : fmt::format("AdamW::step DIFFERS from the hand computation by "
                                         "{:.3g} (step_count {})",
                                         difference, adamw.step_count));

    // The first update for gradients a thousand times apart: SGD moves lr * g, AdamW about lr.
    std::vector<std::string> labels;
    std::vector<double> sgd_updates, adamw_updates;
    fmt::print("\nthe first update at lr = {}\n{:>10} {:>12} {:>12}\n", config.lr, "gradient",
               "SGD", "AdamW");
    for (const double scale : config.scales) {
      const double sgd_update = first_update(config.p, scale, device, [&](const torch::Tensor& t) {
        return g2c::nn::SGD({t}, config.lr);
      });
      const double adamw_update =
          first_update(config.p, scale, device, [&](const torch::Tensor& t) {
            return g2c::nn::AdamW({t}, config.lr, {config.beta1, config.beta2}, config.eps);
          });
      fmt::print("{:>10} {:>12.4g} {:>12.4g}\n", scale, sgd_update, adamw_update);
      labels.push_back(fmt::format("{}", scale));
      sgd_updates.push_back(sgd_update);
      adamw_updates.push_back(adamw_update);
    }

    auto result = g2c::exercises::run_metadata("03b_adamw_by_hand", options, device);
    result["config"] = {{"p", config.p},          {"grad", config.grad},   {"lr", config.lr},
                        {"beta1", config.beta1},  {"beta2", config.beta2}, {"eps", config.eps},
                        {"scales", config.scales}};
    result["by_hand"] = {{"m", m},         {"v", v},           {"m_hat", m_hat},
                         {"v_hat", v_hat}, {"update", update}, {"new_p", new_p}};
    result["adamw"] = {
        {"m", adamw_m}, {"v", adamw_v}, {"new_p", adamw_p}, {"step_count", adamw.step_count}};
    result["max_difference"] = difference;
    result["agrees"] = agrees;
    result["first_update"] = {{"gradient", labels}, {"sgd", sgd_updates}, {"adamw", adamw_updates}};
    using g2c::exercises::Figure;
    using g2c::exercises::Series;
    result["figures"] = g2c::exercises::figures(
        {Figure::bar(
             "adamw_first_update.png",
             fmt::format("First update at lr = {}: SGD scales with the gradient, AdamW does not",
                         config.lr),
             "gradient", "|update|")
             .logy()
             .add(Series("SGD", "/first_update/gradient", "/first_update/sgd"))
             .add(Series("AdamW", "/first_update/gradient", "/first_update/adamw"))});
    const auto path = g2c::exercises::save_result(options, "adamw_by_hand.json", result);
    g2c::exercises::plot_result(options, path);
    if (!agrees) {
      throw std::runtime_error(
          "AdamW::step does not match the hand computation: compare the two columns above");
    }
  });
}

}  // namespace exercise_03b_adamw_by_hand
