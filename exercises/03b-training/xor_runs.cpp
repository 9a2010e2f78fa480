#include "xor_runs.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "exercises/common/training.h"
#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/training.h"

namespace g2c::exercises {

XorData make_xor_data(std::int64_t per_corner, double noise, std::uint64_t seed,
                      double train_fraction) {
  if (per_corner < 1 || !(noise >= 0) || !(train_fraction > 0 && train_fraction < 1)) {
    throw ValueError(fmt::format(
        "make_xor_data: need per_corner >= 1, noise >= 0 and 0 < train_fraction < 1, got {}, "
        "{}, {}",
        per_corner, noise, train_fraction));
  }
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto centres = torch::tensor({{-1.0f, -1.0f}, {-1.0f, 1.0f}, {1.0f, -1.0f}, {1.0f, 1.0f}});
  const auto labels = torch::tensor({0, 1, 1, 0}, torch::kLong);  // XOR of the two signs
  auto x = centres.repeat_interleave(per_corner, /*dim=*/0);      // (4 per_corner, 2)
  const auto y = labels.repeat_interleave(per_corner);            // (4 per_corner)
  x = x + noise * torch::randn(x.sizes(), generator);
  const auto count = x.size(0);
  const auto order = torch::randperm(count, generator);
  x = x.index_select(0, order);
  const auto shuffled_y = y.index_select(0, order);
  const auto split = static_cast<std::int64_t>(train_fraction * static_cast<double>(count));
  if (split < 1 || split >= count) {
    throw ValueError(
        fmt::format("make_xor_data: {} points split at {} leave a side empty", count, split));
  }
  return {x.slice(0, 0, split), shuffled_y.slice(0, 0, split), x.slice(0, split),
          shuffled_y.slice(0, split)};
}

XorData to_device(const XorData& data, const torch::Device& device) {
  return {data.x_train.to(device), data.y_train.to(device), data.x_val.to(device),
          data.y_val.to(device)};
}

RunRecord train_run(g2c::nn::Module& model, const XorData& data, const OptimizerSetting& setting,
                    std::int64_t steps,
                    const std::function<void(std::int64_t, g2c::nn::Module&)>& after_step) {
  const g2c::nn::CrossEntropyLoss cross_entropy;
  auto optimizer = g2c::nn::make_optimizer(setting.optimizer, model.parameters(), setting.lr,
                                           setting.weight_decay);
  RunRecord record;
  for (std::int64_t step = 1; step <= steps; ++step) {
    optimizer->zero_grad();
    auto loss = cross_entropy(model(data.x_train), data.y_train);
    loss.backward();
    optimizer->step();
    const double value = loss.item<double>();
    if (!std::isfinite(value)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      record.train_loss.push_back(nan);
      record.val_loss.push_back(nan);
      record.stopped_at = step;
      for (std::int64_t rest = step; after_step && rest <= steps; ++rest) after_step(rest, model);
      break;
    }
    record.train_loss.push_back(value);
    record.val_loss.push_back(evaluate(model, data.x_val, data.y_val).loss);
    if (after_step) after_step(step, model);
  }
  return record;
}

Evaluation evaluate(g2c::nn::Module& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  const auto logits = model(x);
  return {g2c::nn::CrossEntropyLoss()(logits, y).item<double>(),
          g2c::nn::accuracy_from_logits(logits, y)};
}

std::string describe_end(const RunRecord& record, std::int64_t steps) {
  if (record.stopped_at) {
    return fmt::format("the loss became non-finite at step {}; the run stopped there",
                       *record.stopped_at);
  }
  return fmt::format("completed all {} steps", steps);
}

nlohmann::json series_json(const std::vector<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const double value : values) {
    if (std::isfinite(value)) {
      out.push_back(value);
    } else {
      out.push_back(nullptr);
    }
  }
  return out;
}

nlohmann::json step_numbers(std::size_t count) {
  std::vector<std::int64_t> steps(count);
  for (std::size_t i = 0; i < count; ++i) steps[i] = static_cast<std::int64_t>(i) + 1;
  return steps;
}

nlohmann::json points_by_class(const torch::Tensor& x, const torch::Tensor& y) {
  const auto points = x.detach().to(torch::kCPU, torch::kDouble).contiguous();
  const auto labels = y.to(torch::kCPU).contiguous();
  nlohmann::json out;
  for (std::int64_t label = 0; label < 2; ++label) {
    const auto chosen = points.index({labels == label});  // (n, 2)
    const auto xs = chosen.select(1, 0).contiguous(), ys = chosen.select(1, 1).contiguous();
    out[fmt::format("class{}", label)] = {
        {"x", std::vector<double>(xs.data_ptr<double>(), xs.data_ptr<double>() + xs.numel())},
        {"y", std::vector<double>(ys.data_ptr<double>(), ys.data_ptr<double>() + ys.numel())}};
  }
  return out;
}

}  // namespace g2c::exercises
