// Beyond module midtraining framework checks: the mixture's accounting is exact (every row's source
// read back from its values matches the counts; a stream source is asked once per batch for exactly
// its rows); module 10's Trainer trains on a mixture and draws its batches from the trainer's
// generator; the per-domain evaluation equals a hand loop over fresh generators; the
// constructor's messages name what is wrong.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/midtraining/evaluation.h"
#include "g2c/midtraining/mixture.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/loss.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"
#include "torch_test.h"

using g2c::midtraining::DomainEvalOptions;
using g2c::midtraining::Named;
using g2c::midtraining::TokenMixture;
using g2c::pretraining::LMBatch;
using g2c::pretraining::TokenSource;

namespace {

/// A stream of the constant token `value` that records every request it gets.
class RecordingStream : public g2c::pretraining::TokenStream {
 public:
  explicit RecordingStream(std::int64_t value) : value_(value) {}
  std::int64_t size() const override { return 1'000; }
  LMBatch get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                       std::optional<at::Generator>) override {
    requests.push_back(batch_size);
    const auto rows = torch::full({batch_size, context_length}, value_, torch::kLong);
    return {rows, rows.clone()};
  }
  std::vector<std::int64_t> requests;

 private:
  std::int64_t value_;
};

}  // namespace

TEST_CASE("mixture_accounting_is_exact_row_by_row", "[midtraining]") {
  RecordingStream stream(5'000);  // outside both ranges below
  TokenMixture mixture(
      {{"low", torch::arange(0, 300)}, {"high", torch::arange(1'000, 1'300)}, {"constant", stream}},
      {{"constant", 1.0}, {"low", 3.0}, {"high", 2.0}});
  CHECK(
      torch::allclose(mixture.weights, torch::tensor({0.5, 1.0 / 3.0, 1.0 / 6.0}, torch::kDouble)));
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  std::vector<std::int64_t> seen(3, 0);
  std::int64_t rows = 0;
  for (const std::int64_t batch : {1, 2, 5, 17, 33, 64}) {
    const auto before_requests = stream.requests.size();
    const auto before = mixture.example_counts;
    const auto [x, y] = mixture.get_lm_batch(batch, 6, generator);
    REQUIRE(x.size(0) == batch);
    std::vector<std::int64_t> here(3, 0);
    for (std::int64_t r = 0; r < batch; ++r) {
      const auto first = x[r][0].item<std::int64_t>();
      const int source = first == 5'000 ? 2 : first < 1'000 ? 0 : 1;
      here[source] += 1;
    }
    for (int s = 0; s < 3; ++s) {
      INFO("batch of " << batch << ", source " << s);
      CHECK(mixture.example_counts[s] - before[s] == here[s]);
      seen[s] += here[s];
    }
    // The stream is asked at most once per batch, for exactly its rows, never for none.
    if (here[2] > 0) {
      REQUIRE(stream.requests.size() == before_requests + 1);
      CHECK(stream.requests.back() == here[2]);
    } else {
      CHECK(stream.requests.size() == before_requests);
    }
    rows += batch;
  }
  CHECK(seen == mixture.example_counts);
  const auto fractions = mixture.observed_fractions();
  for (int s = 0; s < 3; ++s) {
    CHECK(fractions[s] == Approx(static_cast<double>(seen[s]) / static_cast<double>(rows)));
  }
}

TEST_CASE("module_10s_trainer_trains_on_a_mixture", "[midtraining]") {
  torch::manual_seed(3);
  auto model = g2c::transformer::TransformerLM(30, 16, 1, 2, 8);
  TokenMixture mixture({{"a", torch::arange(0, 400) % 10}, {"b", torch::arange(0, 400) % 20 + 10}},
                       {{"a", 0.75}, {"b", 0.25}});
  g2c::pretraining::Trainer trainer(model,
                                    g2c::pretraining::TrainerOptions(4, 8, 5, 1e-3)
                                        .optimizer("adamw")
                                        .log_every(1)
                                        .eval_every(5)
                                        .generator(at::make_generator<at::CPUGeneratorImpl>(9))
                                        .device("cpu"));
  const auto history = trainer.train(mixture);
  CHECK(trainer.step == 5);
  CHECK(history.train_loss.size() == 5);
  std::int64_t rows = 0;
  for (const auto count : mixture.example_counts) rows += count;
  CHECK(rows == 5 * 4);

  // The batches come from the trainer's generator: a copy of the mixture drawn with a generator of
  // the same seed realises the same counts.
  TokenMixture replay({{"a", torch::arange(0, 400) % 10}, {"b", torch::arange(0, 400) % 20 + 10}},
                      {{"a", 0.75}, {"b", 0.25}});
  auto generator = at::make_generator<at::CPUGeneratorImpl>(9);
  for (int i = 0; i < 5; ++i) replay.get_lm_batch(4, 8, generator);
  CHECK(replay.example_counts == mixture.example_counts);
}

TEST_CASE("domain_losses_equal_a_hand_loop_over_fresh_generators", "[midtraining]") {
  torch::manual_seed(4);
  auto model = g2c::transformer::TransformerLM(12, 8, 1, 2, 6);
  const Named<TokenSource> domains = {{"first", torch::arange(0, 120) % 12},
                                      {"second", (torch::arange(0, 90) * 7) % 12}};
  const auto options = DomainEvalOptions(3, 6).eval_iters(4).device("cpu").seed(21);
  const auto losses = g2c::midtraining::evaluate_domain_losses(*model, domains, options);
  REQUIRE(losses.size() == 2);
  torch::NoGradGuard no_grad;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(21);
    double total = 0.0;
    for (int i = 0; i < 4; ++i) {
      const auto batch = domains[d].second.get_lm_batch(3, 6, generator);
      total += g2c::pretraining::lm_cross_entropy(model(batch.x), batch.y).item<double>();
    }
    CHECK(losses[d].first == domains[d].first);
    CHECK(losses[d].second == Approx(total / 4).epsilon(1e-12));
  }
}

TEST_CASE("mixture_messages_name_what_is_wrong", "[midtraining]") {
  const auto a = torch::arange(10);
  CHECK_THROWS_WITH(TokenMixture({{"a", a}}, {{"a", std::nan("")}}),
                    Catch::Contains("finite") && Catch::Contains("\"a\""));
  CHECK_THROWS_WITH(TokenMixture({{"", a}}, {{"", 1.0}}), Catch::Contains("non-empty strings"));
  CHECK_THROWS_WITH(TokenMixture({{"a", a}, {"a", a}}, {{"a", 1.0}}), Catch::Contains("twice"));
  CHECK_THROWS_WITH(TokenMixture({{"a", a}}, {{"a", 1.0}, {"a", 2.0}}),
                    Catch::Contains("identical keys"));
  TokenMixture mixture({{"python", a}, {"prose", a}}, {{"prose", 1.0}, {"python", 3.0}});
  CHECK(mixture.to_string() == "TokenMixture(python=75.0%, prose=25.0%)");
  CHECK(mixture.size() == 20);
}
