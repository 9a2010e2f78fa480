// Module 09b course tests: token-stream splits, next-token batches and the LM loss, one for one
// with the Python edition's tests/test_pretraining_setup.py. Tests tagged [clean] pass on the
// scaffold (split_token_stream and get_lm_batch are provided); the lm_cross_entropy tests pass once
// g2c/pretraining/loss.cpp is written (it builds on module 03's CrossEntropyLoss, so that has to
// be written too, or `-DG2C_SOLUTIONS=03`).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::pretraining::get_lm_batch;
using g2c::pretraining::lm_cross_entropy;
using g2c::pretraining::LMBatch;
using g2c::pretraining::split_token_stream;
using g2c::pretraining::TokenStream;

namespace {

bool same_ids(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && torch::equal(a, b);
}

/// A corpus that draws its own batches, like a memory-mapped stream on disk: every x is zeros and
/// every y ones, which no window of a real tensor would give.
class FakeDiskStream : public TokenStream {
 public:
  std::int64_t size() const override { return 100; }
  LMBatch get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                       std::optional<at::Generator>) override {
    const auto x = torch::zeros({batch_size, context_length}, torch::kLong);
    return {x, x + 1};
  }
};

}  // namespace

TEST_CASE("split_token_stream_returns_contiguous_splits", "[clean]") {
  const auto [train, val] = split_token_stream(torch::arange(10), 0.7);
  CHECK(same_ids(train, torch::arange(7)));
  CHECK(same_ids(val, torch::arange(7, 10)));
}

TEST_CASE("split_token_stream_rejects_non_1d_input", "[clean]") {
  CHECK_THROWS_WITH(split_token_stream(torch::zeros({3, 4}, torch::kLong)), Contains("1-D"));
  CHECK_THROWS_AS(split_token_stream(torch::zeros({3, 4}, torch::kLong)), g2c::ValueError);
}

TEST_CASE("split_token_stream_rejects_empty_split", "[clean]") {
  CHECK_THROWS_WITH(split_token_stream(torch::arange(2), 0.01), Contains("empty"));
  CHECK_THROWS_AS(split_token_stream(torch::arange(2), 0.01), g2c::ValueError);
}

TEST_CASE("split_token_stream_rejects_invalid_fraction", "[clean]") {
  for (const double fraction : {0.0, 1.0, -0.1, 1.1}) {
    INFO("train_fraction " << fraction);
    CHECK_THROWS_WITH(split_token_stream(torch::arange(10), fraction), Contains("between 0 and 1"));
    CHECK_THROWS_AS(split_token_stream(torch::arange(10), fraction), g2c::ValueError);
  }
}

TEST_CASE("get_lm_batch_shapes", "[clean]") {
  const auto [x, y] = get_lm_batch(torch::arange(100), /*batch_size=*/4, /*context_length=*/6);
  CHECK(x.sizes() == torch::IntArrayRef({4, 6}));
  CHECK(y.sizes() == torch::IntArrayRef({4, 6}));
  CHECK(x.scalar_type() == torch::kLong);
  CHECK(y.scalar_type() == torch::kLong);
}

TEST_CASE("get_lm_batch_targets_are_shifted_by_one", "[clean]") {
  const auto [x, y] = get_lm_batch(torch::arange(100), /*batch_size=*/8, /*context_length=*/5);
  CHECK(same_ids(y, x + 1));
}

TEST_CASE("get_lm_batch_no_overrun", "[clean]") {
  const auto ids = torch::arange(20);
  for (int draw = 0; draw < 50; ++draw) {
    const auto [x, y] = get_lm_batch(ids, /*batch_size=*/4, /*context_length=*/4);
    CHECK(x.max().item<std::int64_t>() < 20);
    CHECK(y.max().item<std::int64_t>() < 20);
  }
}

TEST_CASE("get_lm_batch_too_short_raises", "[clean]") {
  CHECK_THROWS_AS(get_lm_batch(torch::arange(5), /*batch_size=*/2, /*context_length=*/10),
                  g2c::ValueError);
}

TEST_CASE("get_lm_batch_reproducible_with_generator", "[clean]") {
  const auto ids = torch::arange(1000);
  auto first = at::make_generator<at::CPUGeneratorImpl>(42);
  auto second = at::make_generator<at::CPUGeneratorImpl>(42);
  const auto a = get_lm_batch(ids, /*batch_size=*/4, /*context_length=*/8, first);
  const auto b = get_lm_batch(ids, /*batch_size=*/4, /*context_length=*/8, second);
  CHECK(same_ids(a.x, b.x));
  CHECK(same_ids(a.y, b.y));
}

TEST_CASE("get_lm_batch_delegates_to_disk_backed_stream", "[clean]") {
  FakeDiskStream stream;
  const auto [x, y] = get_lm_batch(stream, /*batch_size=*/3, /*context_length=*/4);
  CHECK(x.sizes() == torch::IntArrayRef({3, 4}));
  CHECK(same_ids(y, x + 1));
}

TEST_CASE("lm_cross_entropy_returns_scalar") {
  const auto logits = torch::randn({2, 3, 5});
  const auto targets = torch::randint(0, 5, {2, 3}, torch::kLong);
  INFO("lm_cross_entropy must return one number (a 0-d tensor), the mean over all B·T positions");
  CHECK(lm_cross_entropy(logits, targets).dim() == 0);
}

TEST_CASE("lm_cross_entropy_uniform_logits_equals_log_vocab") {
  const auto logits = torch::zeros({3, 4, 7});
  const auto targets = torch::randint(0, 7, {3, 4}, torch::kLong);
  const double loss = lm_cross_entropy(logits, targets).item<double>();
  INFO("uniform logits over V = 7 classes must give ln 7 = "
       << std::log(7.0) << ", got " << loss
       << ": 12 times that means the loss sums over positions instead of averaging, 4 or 3 times "
          "that means it sums over one axis");
  CHECK(loss == within(std::log(7.0), 1e-5));
}

TEST_CASE("lm_cross_entropy_perfect_predictions_near_zero") {
  const auto targets = torch::randint(0, 6, {2, 5}, torch::kLong);
  auto logits = torch::zeros({2, 5, 6});
  logits.scatter_(/*dim=*/2, targets.unsqueeze(-1), 100.0);
  const double loss = lm_cross_entropy(logits, targets).item<double>();
  INFO("a logit of 100 on every target must give a loss near 0, got "
       << loss
       << ": each position must be scored against its own target (flatten logits and targets the "
          "same way)");
  CHECK(loss < 1e-3);
}

TEST_CASE("lm_cross_entropy_per_position_average") {
  // One sequence of two positions over V = 4: position 0 predicts its target perfectly (loss
  // ~0), position 1 is uniform (loss ln 4). The mean over positions is ln 4 / 2.
  auto logits = torch::zeros({1, 2, 4});
  logits.index_put_({0, 0, 2}, 100.0);
  const auto targets = torch::tensor({{2, 1}}, torch::kLong);
  const double loss = lm_cross_entropy(logits, targets).item<double>();
  INFO(
      "one perfect position (loss 0) and one uniform over 4 (loss ln 4) must average to ln 4 / 2 "
      "= "
      << std::log(4.0) / 2.0 << ", got " << loss << ": the mean over B·T positions");
  CHECK(loss == within(std::log(4.0) / 2.0, 1e-4));
}

TEST_CASE("lm_cross_entropy_routes_gradients") {
  const auto logits = torch::randn({2, 3, 5}, torch::requires_grad());
  const auto targets = torch::randint(0, 5, {2, 3}, torch::kLong);
  lm_cross_entropy(logits, targets).backward();
  REQUIRE(logits.grad().defined());
  CHECK(torch::isfinite(logits.grad()).all().item<bool>());
}
