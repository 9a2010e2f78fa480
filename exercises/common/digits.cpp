#include "exercises/common/digits.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exercises/common/data.h"
#include "exercises/common/tensor_json.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/nn/losses.h"
#include "g2c/nn/optim.h"
#include "g2c/nn/training.h"

namespace g2c::exercises {

namespace {

constexpr int kScanSide = 8;
constexpr int kScanMaxPixel = 16;

}  // namespace

Digits Digits::select(const torch::Tensor& index) const {
  return {images.index_select(0, index), labels.index_select(0, index)};
}

Digits read_digit_csv(const std::filesystem::path& path, std::int64_t side, int max_pixel) {
  const std::string text = g2c::read_file(path);
  const auto pixels_per_line = static_cast<std::size_t>(side * side);
  std::vector<float> pixels;
  std::vector<std::int64_t> labels;
  std::istringstream lines(text);
  std::string line;
  std::int64_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return g2c::ValueError(fmt::format(
          "{}:{}: {}; each line is {} pixels 0..{} and a label 0..9, comma-separated. Delete the "
          "file and run scripts/setup.sh (or the program that made it) for a verified copy",
          path.string(), number, why, pixels_per_line, max_pixel));
    };
    std::vector<int> fields;
    const char* at = line.data();
    const char* end = line.data() + line.size();
    while (at <= end) {
      int value = 0;
      const auto [next, error] = std::from_chars(at, end, value);
      if (error != std::errc() || (next != end && *next != ',')) {
        throw bad(fmt::format("field {} is not an integer", fields.size() + 1));
      }
      fields.push_back(value);
      if (fields.size() > pixels_per_line + 1) {
        throw bad(fmt::format("more than {} fields", pixels_per_line + 1));
      }
      at = next + 1;
    }
    if (fields.size() != pixels_per_line + 1) {
      throw bad(fmt::format("{} fields, not {}", fields.size(), pixels_per_line + 1));
    }
    for (std::size_t i = 0; i < pixels_per_line; ++i) {
      if (fields[i] < 0 || fields[i] > max_pixel) {
        throw bad(fmt::format("pixel {} is {}, outside 0..{}", i, fields[i], max_pixel));
      }
      pixels.push_back(static_cast<float>(fields[i]) / static_cast<float>(max_pixel));
    }
    if (fields.back() < 0 || fields.back() > 9) {
      throw bad(fmt::format("label {} is not a digit", fields.back()));
    }
    labels.push_back(fields.back());
  }
  const auto n = static_cast<std::int64_t>(labels.size());
  return {torch::tensor(pixels).reshape({n, side, side}), torch::tensor(labels, torch::kLong)};
}

Digits load_digits() {
  const auto path = data_file("digits8x8.csv");
  auto digits = read_digit_csv(path, kScanSide, kScanMaxPixel);
  const auto n = digits.size();
  if (n == 0 || torch::bincount(digits.labels, {}, 10).min().item<std::int64_t>() == 0) {
    throw g2c::ValueError(fmt::format(
        "{} does not hold all ten digits ({} lines): delete it and run scripts/setup.sh",
        path.string(), n));
  }
  return digits;
}

Digits resized(const Digits& digits, std::int64_t size) {
  namespace F = torch::nn::functional;
  const auto images =
      F::interpolate(digits.images.unsqueeze(1), F::InterpolateFuncOptions()
                                                     .size(std::vector<std::int64_t>{size, size})
                                                     .mode(torch::kBilinear)
                                                     .align_corners(false))
          .squeeze(1)
          .clamp(0.0, 1.0);
  return {images, digits.labels};
}

DigitSplit stratified_split(const Digits& digits, double test_fraction, std::uint64_t seed) {
  if (!(test_fraction > 0.0 && test_fraction < 1.0)) {
    throw g2c::ValueError(fmt::format("test_fraction must be in (0, 1), got {}", test_fraction));
  }
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<torch::Tensor> train, test;
  for (std::int64_t digit = 0; digit < 10; ++digit) {
    const auto rows = (digits.labels == digit).nonzero().flatten();
    const auto order = rows.index_select(0, torch::randperm(rows.size(0), generator));
    const auto held = static_cast<std::int64_t>(std::llround(test_fraction * rows.size(0)));
    test.push_back(order.narrow(0, 0, held));
    train.push_back(order.narrow(0, held, rows.size(0) - held));
  }
  // Sorted back into file order: the split decides membership, a training loop its own order.
  const auto gather = [&](const std::vector<torch::Tensor>& parts) {
    return digits.select(std::get<0>(torch::cat(parts).sort()));
  };
  return {gather(train), gather(test)};
}

torch::Tensor confusion_matrix(const torch::Tensor& predicted, const torch::Tensor& truth) {
  const auto cells =
      truth.to(torch::kCPU, torch::kLong) * 10 + predicted.to(torch::kCPU, torch::kLong);
  return torch::bincount(cells, {}, 100).reshape({10, 10});
}

nlohmann::json DigitMlpRun::to_json() const {
  return {{"train_loss", train_loss},
          {"train_accuracy", train_accuracy},
          {"test_accuracy", test_accuracy},
          {"test", test.to_json()},
          {"confusion", matrix_json(confusion)}};
}

DigitMlpRun train_digit_mlp(const DigitSplit& split, const DigitMlpOptions& options,
                            torch::Device device, bool quiet) {
  torch::manual_seed(options.seed);
  auto model = g2c::nn::build_mnist_mlp(options.hidden, options.use_relu);
  model->to(device);
  g2c::nn::SGD optimizer(model->parameters(), options.lr);
  const g2c::nn::CrossEntropyLoss loss;
  const auto flat = [&](const Digits& digits) {  // (N, 28, 28) -> (N, 784) on the device
    return digits.images.reshape({digits.size(), -1}).to(device);
  };
  const auto train_x = flat(split.train), test_x = flat(split.test);
  const auto train_y = split.train.labels.to(device), test_y = split.test.labels.to(device);
  const auto batches_of = [&](const torch::Tensor& x, const torch::Tensor& y,
                              const torch::Tensor& order) {
    std::vector<g2c::nn::Batch> batches;
    for (std::int64_t start = 0; start < order.size(0); start += options.batch_size) {
      const auto rows = order.narrow(0, start, std::min(options.batch_size, order.size(0) - start));
      batches.push_back({x.index_select(0, rows), y.index_select(0, rows)});
    }
    return batches;
  };
  const auto test_batches =
      batches_of(test_x, test_y, torch::arange(split.test.size(), torch::kLong).to(device));
  const auto train_in_order =
      batches_of(train_x, train_y, torch::arange(split.train.size(), torch::kLong).to(device));
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed + 1);

  DigitMlpRun run;
  for (std::int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto order = torch::randperm(split.train.size(), generator).to(device);
    run.train_loss.push_back(
        g2c::nn::train_one_epoch(*model, batches_of(train_x, train_y, order), optimizer, loss));
    run.train_accuracy.push_back(g2c::nn::evaluate_accuracy(*model, train_in_order));
    run.test_accuracy.push_back(g2c::nn::evaluate_accuracy(*model, test_batches));
    if (!quiet) {
      fmt::print("  epoch {:>3}  loss {:.4f}  train {:5.1f}%  test {:5.1f}%\n", epoch,
                 run.train_loss.back(), 100 * run.train_accuracy.back(),
                 100 * run.test_accuracy.back());
    }
  }
  torch::NoGradGuard no_grad;
  const auto predicted = (*model)(test_x).argmax(-1);
  run.test = {(predicted == test_y).sum().item<std::int64_t>(), split.test.size()};
  run.confusion = confusion_matrix(predicted, test_y);
  return run;
}

}  // namespace g2c::exercises
