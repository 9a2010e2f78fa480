// Framework tests of the module 09 exercises' helpers (exercises/09-transformer): a wiring wrapped
// as a Module is the model it wraps, and train_on_stream reaches the exercises' shared loop with
// the optimizer it names and reproducible batches.
#include <torch/torch.h>

#include "exercises/09-transformer/toy_stream.h"
#include "exercises/09-transformer/train_on_stream.h"
#include "exercises/09-transformer/variants.h"
#include "g2c/core/errors.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::exercises::toy::TrainSettings;
using g2c::exercises::toy::WiredTransformerLM;
using g2c::exercises::toy::Wiring;
using g2c::testing::max_abs_diff;

namespace {

/// TransformerLM(V 10, D 16, L 2, 2 heads, max 8): the toy stream's ids, windows of 8.
g2c::transformer::TransformerLM make_transformer(std::uint64_t seed) {
  torch::manual_seed(seed);
  return g2c::transformer::TransformerLM(
      g2c::transformer::TransformerLMOptions(/*vocab_size=*/10, /*embedding_dim=*/16,
                                             /*num_layers=*/2, /*num_heads=*/2,
                                             /*max_seq_len=*/8));
}

TrainSettings short_settings(const std::string& optimizer) {
  TrainSettings settings;
  settings.steps = 6;
  settings.batch_size = 4;
  settings.context_length = 8;
  settings.optimizer = optimizer;
  settings.lr = optimizer == "sgd" ? 0.1 : 1e-2;
  settings.log_every = 2;
  settings.batch_seed = 3;
  return settings;
}

}  // namespace

TEST_CASE("wired_transformer_lm_is_the_model_it_wraps", "[exercises]") {
  const auto wiring = GENERATE(Wiring::pre_norm, Wiring::post_norm, Wiring::no_norm);
  auto model = make_transformer(1);
  WiredTransformerLM wired(model, wiring);
  const auto own = model->parameters(), seen = wired->parameters();
  REQUIRE(seen.size() == own.size());
  for (std::size_t i = 0; i < own.size(); ++i) CHECK(seen[i].is_same(own[i]));
  const auto ids = torch::randint(10, {3, 8}, torch::kLong);  // (B, T)
  const auto logits = wired->forward(ids);                    // (B, T, V)
  INFO(g2c::exercises::toy::wiring_name(wiring));
  CHECK(max_abs_diff(logits, g2c::exercises::toy::lm_forward(*model, ids, wiring)) == 0.0);
  CHECK(logits.sizes() == torch::IntArrayRef({3, 8, 10}));
}

TEST_CASE("train_on_stream_repeats_its_batches_and_learns", "[exercises]") {
  const std::string optimizer = GENERATE("sgd", "adamw");
  const auto stream = g2c::exercises::toy::toy_stream(4);  // (64)
  const auto settings = short_settings(optimizer);
  auto first_model = make_transformer(2), second_model = make_transformer(2);
  const auto first =
      g2c::exercises::toy::train_on_stream(*first_model, stream, settings, optimizer, false);
  const auto second =
      g2c::exercises::toy::train_on_stream(*second_model, stream, settings, optimizer, false);
  INFO(optimizer << ": loss " << first.train_loss.front() << " -> " << first.final_train_loss);
  CHECK(first.steps == std::vector<std::int64_t>{0, 2, 4, 5});
  CHECK(first.train_loss == second.train_loss);
  CHECK(first.final_train_loss < first.train_loss.front());
  const auto curve = g2c::exercises::toy::curve_json(first);
  CHECK(curve["final_loss"].get<double>() == first.final_train_loss);
  CHECK(curve["loss"].size() == 4);
}

TEST_CASE("train_on_stream_rejects_an_unknown_optimizer", "[exercises]") {
  auto model = make_transformer(3);
  const auto stream = g2c::exercises::toy::toy_stream(4);
  CHECK_THROWS_AS(
      g2c::exercises::toy::train_on_stream(*model, stream, short_settings("adam"), "adam", false),
      g2c::ValueError);
  CHECK_THROWS_WITH(
      g2c::exercises::toy::train_on_stream(*model, stream, short_settings("adam"), "adam", false),
      Contains("optimizer must be 'sgd' or 'adamw', got 'adam'"));
}
