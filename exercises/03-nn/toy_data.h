// Toy 2-D data for the module 03 exercises, generated in code (no downloads).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/nn/module.h"

namespace g2c::exercises {

struct ToyData {
  torch::Tensor x;  // (N, 2) float32
  torch::Tensor y;  // (N) int64 class labels in {0, 1}
};

/// Two interleaved half moons with Gaussian noise; `label_noise` flips that fraction of labels.
/// Example: make_moons(200, 0.1, 0.0, 0) -> x (200, 2), y (200) with 100 of each class.
ToyData make_moons(std::int64_t count, double noise, double label_noise, std::uint64_t seed);

/// Probability of class 1 on a `resolution` x `resolution` grid covering the data (plus a margin),
/// for a decision-boundary picture: {"x_min", "x_max", "y_min", "y_max", "probability" (rows = y)}.
nlohmann::json decision_grid(g2c::nn::Module& model, const ToyData& data, std::int64_t resolution);

/// Full-batch training in chunks of `every` steps, recording loss and accuracy after each chunk.
/// `validation` (optional) gets its loss and accuracy recorded too.
struct Curves {
  std::vector<std::int64_t> step;
  std::vector<double> train_loss, train_accuracy, val_loss, val_accuracy;
};
Curves train_with_curves(g2c::nn::Module& model, const ToyData& train, const ToyData* validation,
                         std::int64_t steps, std::int64_t every, double lr, double weight_decay,
                         bool quiet, const std::string& label);

/// JSON of the curves: {"step": [...], "train_loss": [...], ...}.
nlohmann::json to_json(const Curves& curves);

}  // namespace g2c::exercises
