// Module 09b framework tests: lm_cross_entropy against LibTorch's own cross_entropy (values and a
// float64 finite-difference gradient), on non-contiguous logits; get_lm_batch's windows against the
// stream they came from and the spread of its starts; bad input.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <set>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "torch_test.h"

using g2c::pretraining::get_lm_batch;
using g2c::pretraining::lm_cross_entropy;
using g2c::pretraining::split_token_stream;
using g2c::testing::max_abs_diff;

namespace {

/// LibTorch's own loss over the flattened positions: the oracle.
torch::Tensor torch_lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              targets.reshape({-1}));
}

}  // namespace

TEST_CASE("lm_cross_entropy_matches_torch_cross_entropy", "[lm_cross_entropy]") {
  torch::manual_seed(3);
  const auto logits = torch::randn({4, 7, 11}, torch::kDouble) * 3.0;
  const auto targets = torch::randint(0, 11, {4, 7}, torch::kLong);
  const auto difference =
      max_abs_diff(lm_cross_entropy(logits, targets), torch_lm_loss(logits, targets));
  std::cout << "largest |difference| = " << difference << "\n";
  CHECK(difference < 1e-12);
}

TEST_CASE("lm_cross_entropy_accepts_non_contiguous_logits", "[lm_cross_entropy]") {
  torch::manual_seed(4);
  // (T, B, V) transposed to (B, T, V): a view that .view() cannot flatten.
  const auto logits = torch::randn({5, 3, 9}, torch::kDouble).transpose(0, 1);
  const auto targets = torch::randint(0, 9, {3, 5}, torch::kLong);
  REQUIRE_FALSE(logits.is_contiguous());
  const auto difference =
      max_abs_diff(lm_cross_entropy(logits, targets), torch_lm_loss(logits, targets));
  std::cout << "largest |difference| = " << difference << "\n";
  CHECK(difference < 1e-12);
}

TEST_CASE("lm_cross_entropy_gradient_matches_finite_differences", "[lm_cross_entropy]") {
  torch::manual_seed(5);
  const auto logits = torch::randn({2, 3, 4}, torch::kDouble).requires_grad_();
  const auto targets = torch::randint(0, 4, {2, 3}, torch::kLong);
  g2c::testing::check_gradients([&] { return lm_cross_entropy(logits, targets); }, {logits});
}

TEST_CASE("lm_cross_entropy_rejects_mismatched_shapes", "[lm_cross_entropy]") {
  const auto logits = torch::zeros({2, 3, 4});
  CHECK_THROWS_AS(lm_cross_entropy(logits, torch::zeros({2, 4}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(lm_cross_entropy(logits.reshape({6, 4}), torch::zeros({6}, torch::kLong)),
                  g2c::ValueError);
  CHECK_THROWS_AS(lm_cross_entropy(logits, torch::zeros({2, 3})), g2c::ValueError);
}

TEST_CASE("get_lm_batch_windows_are_slices_of_the_stream", "[get_lm_batch]") {
  torch::manual_seed(6);
  const auto ids = torch::randint(0, 50, {300}, torch::kLong);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto [x, y] = get_lm_batch(ids, /*batch_size=*/16, /*context_length=*/9, generator);
  for (std::int64_t b = 0; b < 16; ++b) {
    // Find the window's start: the first s with ids[s : s+9] == x[b] (ties are harmless: the
    // targets must then match the same window).
    bool found = false;
    for (std::int64_t s = 0; s + 9 < 300 && !found; ++s) {
      if (torch::equal(ids.slice(0, s, s + 9), x[b])) {
        found = torch::equal(ids.slice(0, s + 1, s + 10), y[b]);
      }
    }
    INFO("row " << b);
    CHECK(found);
  }
}

TEST_CASE("get_lm_batch_reaches_every_start_including_the_last", "[get_lm_batch]") {
  // n = 12, T = 4: starts 0 … 7, eight of them. 400 draws miss one with probability ~1e-23.
  const auto ids = torch::arange(12);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(0);
  std::set<std::int64_t> starts;
  for (int draw = 0; draw < 100; ++draw) {
    const auto batch = get_lm_batch(ids, /*batch_size=*/4, /*context_length=*/4, generator);
    for (std::int64_t b = 0; b < 4; ++b) starts.insert(batch.x[b][0].item<std::int64_t>());
  }
  CHECK(starts.size() == 8);
  CHECK(*starts.begin() == 0);
  CHECK(*starts.rbegin() == 7);
}

TEST_CASE("get_lm_batch_with_exactly_t_plus_one_tokens_has_one_window", "[get_lm_batch]") {
  const auto [x, y] = get_lm_batch(torch::arange(6), /*batch_size=*/3, /*context_length=*/5);
  CHECK(torch::equal(x, torch::arange(5).expand({3, 5})));
  CHECK(torch::equal(y, torch::arange(1, 6).expand({3, 5})));
}

TEST_CASE("get_lm_batch_and_split_token_stream_reject_bad_input", "[get_lm_batch]") {
  CHECK_THROWS_AS(get_lm_batch(torch::arange(10).to(torch::kFloat), 2, 3), g2c::ValueError);
  CHECK_THROWS_AS(get_lm_batch(torch::arange(10).reshape({2, 5}), 2, 3), g2c::ValueError);
  CHECK_THROWS_AS(get_lm_batch(torch::arange(10), 0, 3), g2c::ValueError);
  CHECK_THROWS_AS(get_lm_batch(torch::arange(10), 2, 0), g2c::ValueError);
  CHECK_THROWS_AS(split_token_stream(torch::Tensor()), g2c::ValueError);
  CHECK_THROWS_AS(split_token_stream(torch::arange(10), std::nan("")), g2c::ValueError);
}
