// scikit-learn's 8 × 8 handwritten digits (data/digits8x8.csv, put there by scripts/setup.sh): real
// scans of 1,797 digits (the UCI optdigits test set), each a line of 64 pixels 0..16 row by row
// and its label. Module 03's MNIST-style MLP and the Beyond multimodal captioner read them here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/proportion.h"
#include "g2c/core/torch.h"

namespace g2c::exercises {

/// Images and their labels, one row per digit.
struct Digits {
  torch::Tensor images;  // (N, H, W) float32 in [0, 1]: the scans' 0..16 divided by 16
  torch::Tensor labels;  // (N) int64, 0..9

  std::int64_t size() const { return labels.size(0); }
  /// The rows at `index` (a 1-D int64 tensor), in its order.
  Digits select(const torch::Tensor& index) const;
};

/// A digit CSV as (N, side, side) in [0, 1]: each line side² pixels 0..max_pixel row by row, then
/// the label. ValueError naming the file and line for a line that is not that.
Digits read_digit_csv(const std::filesystem::path& path, std::int64_t side, int max_pixel);

/// Every digit of data/digits8x8.csv as (N, 8, 8). ValueError naming the file and line for a line
/// that is not 64 integers in 0..16 and a label in 0..9, or a file without all ten digits; the
/// missing-file message says how setup makes it.
Digits load_digits();

/// The digits with each image resized to size × size by bilinear interpolation (28: module 03's
/// MNIST-shaped 784 inputs), clamped to [0, 1].
Digits resized(const Digits& digits, std::int64_t size);

struct DigitSplit {
  Digits train;
  Digits test;
};

/// A stratified split: in each class, a seeded shuffle and `test_fraction` of its rows (rounded)
/// held out, so both halves keep the ten classes' proportions. The same seed gives the same split.
/// ValueError for a fraction outside (0, 1).
DigitSplit stratified_split(const Digits& digits, double test_fraction, std::uint64_t seed);

/// counts[t][p]: how many digits of true class t were predicted p. (10, 10) int64.
torch::Tensor confusion_matrix(const torch::Tensor& predicted, const torch::Tensor& truth);

/// Module 03's MNIST network (build_mnist_mlp: 784 -> hidden -> 10) trained on digits resized to
/// 28 × 28, with module 03's minibatch epoch (train_one_epoch) and SGD.
struct DigitMlpOptions {
  std::int64_t hidden = 128;
  bool use_relu = true;
  std::int64_t epochs = 30;
  std::int64_t batch_size = 32;
  double lr = 0.1;
  std::uint64_t seed = 0;  // the initialisation and each epoch's shuffle
};

struct DigitMlpRun {
  std::vector<double> train_loss;      // per epoch, batch-size weighted
  std::vector<double> train_accuracy;  // per epoch
  std::vector<double> test_accuracy;   // per epoch
  Proportion test;                     // the last epoch's, with its interval
  torch::Tensor confusion;             // (10, 10) on the test digits
  nlohmann::json to_json() const;
};

/// Trains and evaluates on `split` (images 28 × 28), printing one line an epoch unless quiet.
DigitMlpRun train_digit_mlp(const DigitSplit& split, const DigitMlpOptions& options,
                            torch::Device device, bool quiet);

}  // namespace g2c::exercises
