// Module 09 framework tests for the fast path (g2c/transformer/fused.h): the fused TransformerLM is
// the lesson's model computed another way, so with the same parameters it must give the same
// logits and the same gradients, reject the same bad input and register the same parameters.
#include <algorithm>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using g2c::testing::close;
using g2c::testing::max_abs_diff;
using g2c::transformer::fused_transformer_lm;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

const TransformerLMOptions kOptions(/*vocab_size=*/17, /*embedding_dim=*/12, /*num_layers=*/2,
                                    /*num_heads=*/3, /*max_seq_len=*/10);

/// A lesson model with random parameters (LayerNorm's gamma = 1, beta = 0 and the zero head bias
/// would hide a mistake in how they are used), and a fused model holding copies of them.
std::pair<TransformerLM, TransformerLM> twin_models(torch::Dtype dtype) {
  torch::manual_seed(2024);
  TransformerLM lesson(kOptions);
  auto fused = fused_transformer_lm(kOptions);
  lesson->to(dtype);
  fused->to(dtype);
  torch::NoGradGuard no_grad;
  const auto lesson_params = lesson->parameters();
  const auto fused_params = fused->parameters();
  for (std::size_t i = 0; i < lesson_params.size(); ++i) {
    lesson_params[i].copy_(0.5 * torch::randn_like(lesson_params[i]));
    fused_params[i].copy_(lesson_params[i]);
  }
  return {lesson, fused};
}

}  // namespace

TEST_CASE("fused_model_registers_the_lesson_parameters", "[transformer]") {
  TransformerLM lesson(kOptions);
  const auto fused = fused_transformer_lm(kOptions);
  std::vector<std::string> lesson_names, fused_names;
  for (const auto& p : lesson->named_parameters()) lesson_names.push_back(p.key());
  for (const auto& p : fused->named_parameters()) fused_names.push_back(p.key());
  CHECK(fused_names == lesson_names);
  CHECK(fused->head_bias.is_same(fused->head->bias));
}

TEST_CASE("fused_forward_matches_the_lesson_forward", "[transformer]") {
  const auto dtype = GENERATE(torch::kDouble, torch::kFloat);
  auto [lesson, fused] = twin_models(dtype);
  const auto length = GENERATE(std::int64_t{1}, std::int64_t{7}, std::int64_t{10});
  const auto ids = torch::randint(0, kOptions.vocab_size(), {3, length}, torch::kLong);
  const auto expected = lesson->forward(ids);
  const auto actual = fused->forward(ids);
  INFO(c10::toString(dtype) << ", T = " << length
                            << ": the fused kernels must compute the lesson's "
                            << "formulas; max |difference| = " << max_abs_diff(actual, expected));
  CHECK(close(actual, expected, dtype == torch::kDouble ? 1e-10 : 2e-5));
}

TEST_CASE("fused_gradients_match_the_lesson_gradients", "[transformer]") {
  auto [lesson, fused] = twin_models(torch::kDouble);
  const auto ids = torch::randint(0, kOptions.vocab_size(), {2, 9}, torch::kLong);
  const auto weights = torch::randn({2, 9, kOptions.vocab_size()}, torch::kDouble);
  (lesson->forward(ids) * weights).sum().backward();
  (fused->forward(ids) * weights).sum().backward();
  const auto lesson_params = lesson->named_parameters();
  const auto fused_params = fused->named_parameters();
  for (std::size_t i = 0; i < lesson_params.size(); ++i) {
    const auto& expected = lesson_params[i].value().grad();
    const auto& actual = fused_params[i].value().grad();
    INFO("gradient of " << lesson_params[i].key());
    REQUIRE(expected.defined());
    REQUIRE(actual.defined());
    CHECK(close(actual, expected, 1e-9));
  }
}

TEST_CASE("fused_model_rejects_the_lesson_bad_input", "[transformer]") {
  auto fused = fused_transformer_lm(kOptions);
  CHECK_THROWS_AS(fused->forward(torch::zeros({1, 11}, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(fused->forward(torch::full({1, 3}, 17, torch::kLong)), g2c::ValueError);
  CHECK_THROWS_AS(fused->forward(torch::zeros({3}, torch::kLong)), g2c::ValueError);
}

TEST_CASE("fused_cached_generation_matches_the_lesson_forward", "[transformer]") {
  auto [lesson, fused] = twin_models(torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto ids =
      torch::randint(0, kOptions.vocab_size(), {2, kOptions.max_seq_len()}, torch::kLong);
  const auto full = lesson->forward(ids);  // (2, T, V)
  auto cache = fused->empty_kv_cache();
  double worst = 0.0;
  for (std::int64_t t = 0; t < ids.size(1); ++t) {
    const auto step = fused->forward_cached(ids.narrow(1, t, 1), cache);  // (2, 1, V)
    worst = std::max(worst, max_abs_diff(step, full.narrow(1, t, 1)));
  }
  INFO("max |fused cached step - lesson forward| over " << ids.size(1) << " steps = " << worst);
  CHECK(worst < 1e-10);
  CHECK_THROWS_AS(fused->forward_cached(ids.narrow(1, 0, 1), cache), g2c::ValueError);  // full
}
