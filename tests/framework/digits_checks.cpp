// Framework checks of the digit data the exercises read (exercises/common/digits.h and
// synth_digits.h): scikit-learn's CSV refused by line when damaged, the stratified split, the
// confusion matrix, and SynthDigits-28 seeded and stored with a manifest that catches an edit.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "exercises/common/digits.h"
#include "exercises/common/synth_digits.h"
#include "g2c/core/errors.h"
#include "g2c_test.h"
#include "temp_dir.h"

using g2c::exercises::Digits;
using g2c::testing::TempDir;

namespace {

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A line of 64 pixels and a label.
std::string digit_line(int label, int pixel = 3) {
  std::string line;
  for (int i = 0; i < 64; ++i) line += fmt::format("{},", pixel);
  return line + std::to_string(label);
}

std::string all_ten() {
  std::string text;
  for (int digit = 0; digit < 10; ++digit) text += digit_line(digit) + "\n";
  return text;
}

}  // namespace

TEST_CASE("load_digits_reads_the_csv_and_refuses_a_damaged_one_by_line") {
  const TempDir dir;
  const ScopedEnv data("G2C_DATA_DIR", dir.path().string());
  const auto path = dir / "digits8x8.csv";
  std::ofstream(path) << all_ten() << digit_line(4, 16) << "\n";
  const auto digits = g2c::exercises::load_digits();
  CHECK(digits.images.sizes() == torch::IntArrayRef({11, 8, 8}));
  CHECK(digits.labels[10].item<std::int64_t>() == 4);
  CHECK(digits.images[10].max().item<float>() == 1.0f);  // 16 / 16
  CHECK(digits.images[0].max().item<float>() == 3.0f / 16);

  const auto refused = [&](const std::string& bad, const std::string& why) {
    std::ofstream(path, std::ios::trunc) << all_ten() << bad << "\n";
    INFO(bad.substr(0, 60));
    CHECK_THROWS_MATCHES(g2c::exercises::load_digits(), g2c::ValueError,
                         MessageContains(path.string() + ":11:"));
    CHECK_THROWS_MATCHES(g2c::exercises::load_digits(), g2c::ValueError, MessageContains(why));
  };
  refused(digit_line(3).substr(2), "64 fields, not 65");
  refused(digit_line(3) + ",7", "more than 65");
  refused(digit_line(3, 17), "outside 0..16");
  refused(digit_line(10), "not a digit");
  refused("x" + digit_line(3), "not an integer");
  refused(digit_line(3).replace(2, 1, ""), "not an integer");  // an empty field
  std::ofstream(path, std::ios::trunc) << digit_line(1) << "\n" << digit_line(2) << "\n";
  CHECK_THROWS_MATCHES(g2c::exercises::load_digits(), g2c::ValueError, MessageContains("all ten"));
  std::filesystem::remove(path);
  CHECK_THROWS_MATCHES(g2c::exercises::load_digits(), g2c::ValueError,
                       MessageContains("scripts/setup.sh"));
}

TEST_CASE("stratified_split_keeps_every_class_in_proportion_and_follows_its_seed") {
  Digits digits{torch::rand({500, 8, 8}), torch::arange(500, torch::kLong) % 10};
  const auto split = g2c::exercises::stratified_split(digits, 0.2, 3);
  CHECK(split.test.size() == 100);
  CHECK(torch::equal(torch::bincount(split.test.labels, {}, 10),
                     torch::full({10}, 10, torch::kLong)));
  // Disjoint, and together every row once: the images identify the rows.
  const auto all = torch::cat({split.train.images, split.test.images}).reshape({500, -1});
  CHECK(std::get<0>(torch::unique_dim(all, 0)).size(0) == 500);
  const auto again = g2c::exercises::stratified_split(digits, 0.2, 3);
  CHECK(torch::equal(again.test.images, split.test.images));
  const auto other = g2c::exercises::stratified_split(digits, 0.2, 4);
  CHECK_FALSE(torch::equal(other.test.images, split.test.images));
  CHECK_THROWS_AS(g2c::exercises::stratified_split(digits, 1.0, 3), g2c::ValueError);
  // A resize keeps the rows in their order, so the same seed splits it the same way.
  const auto large = g2c::exercises::stratified_split(g2c::exercises::resized(digits, 28), 0.2, 3);
  CHECK(torch::equal(large.test.labels, split.test.labels));
  CHECK(large.test.images.sizes() == torch::IntArrayRef({100, 28, 28}));
}

TEST_CASE("confusion_matrix_counts_true_rows_against_predicted_columns") {
  const auto counts =
      g2c::exercises::confusion_matrix(torch::tensor({1, 1, 2, 9}), torch::tensor({1, 2, 2, 0}));
  CHECK(counts.sum().item<std::int64_t>() == 4);
  CHECK(counts[1][1].item<std::int64_t>() == 1);
  CHECK(counts[2][1].item<std::int64_t>() == 1);
  CHECK(counts[2][2].item<std::int64_t>() == 1);
  CHECK(counts[0][9].item<std::int64_t>() == 1);
}

TEST_CASE("synth_digits28_follow_their_seed_and_are_stored_with_a_manifest") {
  const auto a = g2c::exercises::synth_digits28(3, 5);
  CHECK(a.images.sizes() == torch::IntArrayRef({30, 28, 28}));
  CHECK(torch::equal(a.images, g2c::exercises::synth_digits28(3, 5).images));
  CHECK_FALSE(torch::equal(a.images, g2c::exercises::synth_digits28(3, 6).images));
  CHECK(a.images.min().item<float>() >= 0.0f);
  CHECK(a.images.max().item<float>() <= 1.0f);
  // Every image holds a stroke: ink on a clean background.
  CHECK((a.images.reshape({30, -1}) > 0.5).sum(1).min().item<std::int64_t>() > 20);

  const TempDir dir;
  const ScopedEnv artifacts("G2C_ARTIFACTS_DIR", dir.path().string());
  const auto stored = g2c::exercises::stored_synth_digits28(3, 5);
  CHECK(torch::equal(stored.images, a.images));
  const auto folder = dir / "datasets" / "synth28-3-5";
  REQUIRE(std::filesystem::exists(folder / "manifest.json"));
  CHECK(torch::equal(g2c::exercises::stored_synth_digits28(3, 5).images, a.images));  // read back
  // An edited file does not match its manifest's sha256: the set is built again, not trusted.
  std::ofstream(folder / "digits.csv", std::ios::app) << "0\n";
  CHECK(torch::equal(g2c::exercises::stored_synth_digits28(3, 5).images, a.images));
  CHECK_THROWS_AS(g2c::exercises::synth_digits28(0, 5), g2c::ValueError);
}
