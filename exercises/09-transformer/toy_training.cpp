#include "exercises/09-transformer/toy_training.h"

#include <memory>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/optim.h"

namespace g2c::exercises::toy {

torch::Tensor toy_stream(std::int64_t repeats) {
  if (repeats <= 0) throw ValueError(fmt::format("toy_stream needs repeats > 0, got {}", repeats));
  const auto period = torch::tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 0}, torch::kLong);
  return period.repeat({repeats});  // (16 · repeats)
}

std::pair<torch::Tensor, torch::Tensor> sequence_batch(const torch::Tensor& stream,
                                                       std::int64_t batch, std::int64_t length,
                                                       at::Generator& generator) {
  const std::int64_t n = stream.numel();
  if (n <= length) {
    throw ValueError(
        fmt::format("a stream of {} tokens is too short for windows of {} (+1 target)", n, length));
  }
  const auto starts = torch::randint(n - length, {batch}, generator, torch::kLong);  // (B)
  const auto offsets = torch::arange(length, torch::kLong);                          // (T)
  const auto index = starts.unsqueeze(1) + offsets.unsqueeze(0);                     // (B, T)
  return {stream.index({index}), stream.index({index + 1})};
}

Curve train_next_token(const LogitsFn& model, const std::vector<torch::Tensor>& parameters,
                       const torch::Tensor& stream, const TrainConfig& config,
                       const torch::Device& device, const std::string& label, bool progress) {
  std::unique_ptr<g2c::nn::Optimizer> optimizer;
  if (config.optimizer == "sgd") {
    optimizer = std::make_unique<g2c::nn::SGD>(parameters, config.lr, config.weight_decay);
  } else if (config.optimizer == "adamw") {
    optimizer = std::make_unique<g2c::nn::AdamW>(parameters, config.lr, std::make_pair(0.9, 0.999),
                                                 1e-8, config.weight_decay);
  } else {
    throw ValueError(fmt::format("unknown optimizer '{}': use sgd or adamw", config.optimizer));
  }
  auto generator = at::make_generator<at::CPUGeneratorImpl>(config.batch_seed);
  const g2c::nn::CrossEntropyLoss loss_fn;
  Curve curve;
  g2c::Progress bar(label, config.steps, progress);
  for (std::int64_t step = 0; step < config.steps; ++step) {
    auto [x, y] = sequence_batch(stream, config.batch_size, config.context_length, generator);
    const auto logits = model(x.to(device));  // (B, T, V)
    const auto loss =
        loss_fn(logits.reshape({-1, logits.size(-1)}), y.to(device).reshape({-1}));  // (B·T)
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    if (step % config.log_every == 0 || step == config.steps - 1) {
      curve.steps.push_back(step);
      curve.loss.push_back(loss.item<double>());
      bar.update(step + 1, fmt::format("loss {:.3f}", curve.loss.back()));
    }
  }
  bar.finish(fmt::format("loss {:.3f}", curve.final_loss()));
  curve.seconds = bar.elapsed_seconds();
  return curve;
}

nlohmann::json to_json(const TrainConfig& config) {
  return {{"steps", config.steps},
          {"batch_size", config.batch_size},
          {"context_length", config.context_length},
          {"optimizer", config.optimizer},
          {"lr", config.lr},
          {"weight_decay", config.weight_decay},
          {"log_every", config.log_every},
          {"batch_seed", config.batch_seed}};
}

}  // namespace g2c::exercises::toy
