#include "toy_data.h"

#include <numbers>

#include <fmt/format.h>

#include "g2c/core/progress.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/training.h"

namespace g2c::exercises {

ToyData make_moons(std::int64_t count, double noise, double label_noise, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const std::int64_t upper = count / 2;
  const std::int64_t lower = count - upper;
  const auto angle_upper = torch::linspace(0, std::numbers::pi, upper);
  const auto angle_lower = torch::linspace(0, std::numbers::pi, lower);
  auto x = torch::cat({torch::stack({angle_upper.cos(), angle_upper.sin()}, /*dim=*/1),
                       torch::stack({1 - angle_lower.cos(), 0.5 - angle_lower.sin()}, /*dim=*/1)});
  x = x + noise * torch::randn({count, 2}, generator);  // (N, 2)
  auto y = torch::cat({torch::zeros({upper}, torch::kLong), torch::ones({lower}, torch::kLong)});
  if (label_noise > 0) {
    const auto flip = torch::rand({count}, generator) < label_noise;
    y = torch::where(flip, 1 - y, y);
  }
  const auto order = torch::randperm(count, generator);
  return {x.index_select(0, order), y.index_select(0, order)};
}

nlohmann::json decision_grid(g2c::nn::Module& model, const ToyData& data, std::int64_t resolution) {
  torch::NoGradGuard no_grad;
  const double margin = 0.5;
  const auto low = std::get<0>(data.x.min(/*dim=*/0)) - margin;
  const auto high = std::get<0>(data.x.max(/*dim=*/0)) + margin;
  const auto xs = torch::linspace(low[0].item<double>(), high[0].item<double>(), resolution);
  const auto ys = torch::linspace(low[1].item<double>(), high[1].item<double>(), resolution);
  const auto mesh = torch::meshgrid({ys, xs}, "ij");  // 2 x (R, R)
  const auto points = torch::stack({mesh[1].flatten(), mesh[0].flatten()}, /*dim=*/1);  // (R*R, 2)
  const auto probability = torch::softmax(model(points.to(model.device())), /*dim=*/-1)
                               .select(/*dim=*/1, 1)
                               .reshape({resolution, resolution})
                               .to(torch::kDouble)
                               .cpu();
  nlohmann::json rows = nlohmann::json::array();
  for (std::int64_t r = 0; r < resolution; ++r) {
    const auto row = probability[r].contiguous();
    rows.push_back(
        std::vector<double>(row.data_ptr<double>(), row.data_ptr<double>() + resolution));
  }
  return {{"x_min", low[0].item<double>()},
          {"x_max", high[0].item<double>()},
          {"y_min", low[1].item<double>()},
          {"y_max", high[1].item<double>()},
          {"probability", rows}};
}

Curves train_with_curves(g2c::nn::Module& model, const ToyData& train, const ToyData* validation,
                         std::int64_t steps, std::int64_t every, double lr, double weight_decay,
                         bool quiet, const std::string& label) {
  const g2c::nn::CrossEntropyLoss cross_entropy;
  const auto device = model.device();
  const auto x = train.x.to(device), y = train.y.to(device);
  Curves curves;
  auto record = [&](std::int64_t step) {
    torch::NoGradGuard no_grad;
    const auto logits = model(x);
    curves.step.push_back(step);
    curves.train_loss.push_back(cross_entropy(logits, y).item<double>());
    curves.train_accuracy.push_back(g2c::nn::accuracy_from_logits(logits, y));
    if (validation) {
      const auto val_logits = model(validation->x.to(device));
      const auto val_y = validation->y.to(device);
      curves.val_loss.push_back(cross_entropy(val_logits, val_y).item<double>());
      curves.val_accuracy.push_back(g2c::nn::accuracy_from_logits(val_logits, val_y));
    }
  };
  g2c::Progress progress(label, steps, !quiet);
  record(0);
  for (std::int64_t done = 0; done < steps;) {
    const std::int64_t chunk = std::min(every, steps - done);
    g2c::nn::train_classifier(model, x, y, chunk, lr, weight_decay);
    done += chunk;
    record(done);
    progress.update(done, fmt::format("loss {:.4f}", curves.train_loss.back()));
  }
  progress.finish(fmt::format("loss {:.4f}", curves.train_loss.back()));
  return curves;
}

nlohmann::json to_json(const Curves& curves) {
  nlohmann::json out = {{"step", curves.step},
                        {"train_loss", curves.train_loss},
                        {"train_accuracy", curves.train_accuracy}};
  if (!curves.val_loss.empty()) {
    out["val_loss"] = curves.val_loss;
    out["val_accuracy"] = curves.val_accuracy;
  }
  return out;
}

}  // namespace g2c::exercises
