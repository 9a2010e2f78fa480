// What the module 03b exercises share: the XOR-style data set, the small MLP, and the full-batch
// training run that records the training and validation loss of every step and stops at the
// first non-finite loss.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "g2c/nn/module.h"
#include "g2c/nn/optim.h"

namespace g2c::exercises {

/// Four Gaussian blobs at (±1, ±1) with XOR labels — class 0 at (-1, -1) and (1, 1), class 1 at
/// the other two — shuffled, then split: the first `train_fraction` for training, the rest for
/// validation. Example: make_xor_data() -> 512 points, 409 train, 103 validation.
struct XorData {
  torch::Tensor x_train, y_train;  // (N_train, 2) float32, (N_train) int64
  torch::Tensor x_val, y_val;      // (N_val, 2), (N_val)
};
XorData make_xor_data(std::int64_t per_corner = 128, double noise = 0.18, std::uint64_t seed = 0,
                      double train_fraction = 0.8);

/// The data moved to `device`.
XorData to_device(const XorData& data, const torch::Device& device);

/// One optimizer configuration of a run: "sgd" or "adamw" (betas 0.9/0.999, eps 1e-8).
struct OptimizerSetting {
  std::string label;      // "SGD lr=0.1"
  std::string optimizer;  // "sgd" | "adamw"
  double lr = 0.1;
  double weight_decay = 0.0;
};

/// The losses of one run, one entry per step taken: the training loss of the batch the step was
/// computed on (before the update), the validation loss after it. A run whose training loss
/// becomes non-finite stops there; that last entry is NaN in both series (null in the JSON).
struct RunRecord {
  std::vector<double> train_loss, val_loss;
  std::optional<std::int64_t> stopped_at;  // the step (1-based) whose loss was non-finite
};

/// Full-batch training of `model` for `steps` steps on data already on the model's device.
/// `after_step(step, model)` is called after each completed step (1-based) and, for a run that
/// stopped early, once more for every remaining step with the model as it was left.
RunRecord train_run(
    g2c::nn::Module& model, const XorData& data, const OptimizerSetting& setting,
    std::int64_t steps,
    const std::function<void(std::int64_t, g2c::nn::Module&)>& after_step = nullptr);

/// Loss and accuracy of `model` on (x, y), without gradients.
struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;
};
Evaluation evaluate(g2c::nn::Module& model, const torch::Tensor& x, const torch::Tensor& y);

/// "the loss became non-finite at step 12; the run stopped there" or "completed all 300 steps".
std::string describe_end(const RunRecord& record, std::int64_t steps);

/// A loss series as JSON, a non-finite value written as null (JSON has no NaN).
nlohmann::json series_json(const std::vector<double>& values);

/// [1, 2, ..., count]: the step numbers of a series of `count` entries.
nlohmann::json step_numbers(std::size_t count);

/// {"class0": {"x": [...], "y": [...]}, "class1": {...}} for plotting points by class.
nlohmann::json points_by_class(const torch::Tensor& x, const torch::Tensor& y);

}  // namespace g2c::exercises
