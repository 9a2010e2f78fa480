// Module 06 course tests: language models, batching, perplexity, sampling and the training loop,
// one for one with the Python edition's tests/test_lm.py, plus
// language_models_match_cpu_on_accelerator of this edition (tests/course_tests.txt). Tests tagged
// [clean] pass on the scaffold.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/lm/lm.h"
#include "g2c/nn/device.h"
#include "torch_test.h"

using g2c::lm::CountsBigramLM;
using g2c::lm::MLPLanguageModel;
using g2c::lm::NeuralBigramLM;
using g2c::lm::TrainLMOptions;
using g2c::testing::close;

namespace {

// Scores that do not depend on the context: a test knows the exact answer without relying on
// another function of the module.
class FixedScoresLM : public g2c::lm::LanguageModelImpl {
 public:
  FixedScoresLM(const torch::Tensor& scores, std::int64_t context_length)
      : LanguageModelImpl("fixed", scores.size(0), context_length), scores_(scores) {}
  torch::Tensor logits(const torch::Tensor& context) override {
    const auto ids = as_context(context);                                        // (B, N)
    return scores_.unsqueeze(0).expand({ids.size(0), scores_.size(0)}).clone();  // (B, V)
  }

 private:
  torch::Tensor scores_;
};

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

torch::Tensor random_ids(std::int64_t count, std::int64_t vocab, std::uint64_t seed = 0) {
  return torch::randint(0, vocab, {count}, seeded(seed), torch::kLong);
}

std::vector<std::int64_t> repeated(std::vector<std::int64_t> pattern, std::int64_t times) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), pattern.begin(), pattern.end());
  return out;
}

}  // namespace

// --- CountsBigramLM: construction ----------------------------------------------------------

TEST_CASE("counts_construction_table_shape", "[clean]") {
  CountsBigramLM model(10);
  CHECK(model->counts.sizes() == torch::IntArrayRef({10, 10}));
  CHECK(model->counts.scalar_type() == torch::kLong);  // counts are integers (int64)
}

TEST_CASE("counts_construction_starts_zero", "[clean]") {
  CountsBigramLM model(10);
  CHECK(model->counts.sum().item<std::int64_t>() == 0);
}

TEST_CASE("counts_construction_context_length", "[clean]") {
  CHECK(CountsBigramLM(10)->context_length == 1);
}

TEST_CASE("counts_construction_default_smoothing", "[clean]") {
  CHECK(CountsBigramLM(10)->smoothing == 1.0);
}

// --- CountsBigramLM: fit ---------------------------------------------------------------------

TEST_CASE("counts_fit_simple_pair") {
  CountsBigramLM model(5);
  model->fit(torch::tensor({1, 3}, torch::kLong));
  CHECK(model->counts[1][3].item<std::int64_t>() == 1);
  CHECK(model->counts.sum().item<std::int64_t>() == 1);
}

TEST_CASE("counts_fit_multiple_pairs") {
  CountsBigramLM model(5);
  model->fit(torch::tensor({0, 1, 2, 3}, torch::kLong));
  CHECK(model->counts[0][1].item<std::int64_t>() == 1);
  CHECK(model->counts[1][2].item<std::int64_t>() == 1);
  CHECK(model->counts[2][3].item<std::int64_t>() == 1);
  CHECK(model->counts.sum().item<std::int64_t>() == 3);
}

TEST_CASE("counts_fit_repeated_pair_accumulates") {
  CountsBigramLM model(5);
  model->fit(torch::tensor({2, 4, 2, 4, 2, 4}, torch::kLong));
  CHECK(model->counts[2][4].item<std::int64_t>() == 3);
  CHECK(model->counts[4][2].item<std::int64_t>() == 2);
}

TEST_CASE("counts_fit_called_twice_accumulates") {
  CountsBigramLM model(5);
  model->fit(torch::tensor({0, 1}, torch::kLong));
  model->fit(torch::tensor({0, 1}, torch::kLong));
  CHECK(model->counts[0][1].item<std::int64_t>() == 2);
}

TEST_CASE("counts_fit_total_pairs") {
  CountsBigramLM model(10);
  model->fit(random_ids(100, 10));
  CHECK(model->counts.sum().item<std::int64_t>() == 99);
}

// --- CountsBigramLM: logits ----------------------------------------------------------------

TEST_CASE("counts_logits_shape") {
  CountsBigramLM model(10);
  model->fit(random_ids(100, 10));
  CHECK(model->logits(torch::tensor({0, 1, 2}, torch::kLong)).sizes() ==
        torch::IntArrayRef({3, 10}));
}

TEST_CASE("counts_logits_are_log_probs") {
  CountsBigramLM model(10);
  model->fit(random_ids(100, 10));
  const auto logits = model->logits(torch::arange(10, torch::kLong));
  CHECK(close(logits.exp().sum(-1), torch::ones({10}), 1e-5));
}

TEST_CASE("counts_logits_smoothing_no_zero_probability") {
  CountsBigramLM model(10, 1.0);
  model->fit(torch::tensor({0, 1, 0, 1}, torch::kLong));
  CHECK((model->logits(torch::arange(10, torch::kLong)).exp() > 0).all().item<bool>());
}

TEST_CASE("counts_logits_no_smoothing_zero_for_unseen") {
  CountsBigramLM model(5, 0.0);
  model->fit(torch::tensor({0, 1, 0, 1}, torch::kLong));
  const auto row = model->logits(torch::tensor({0}, torch::kLong))[0];
  CHECK(std::isinf(row[2].item<double>()));
  CHECK(row[2].item<double>() < 0);
  CHECK(row[2].exp().item<double>() == 0.0);
  INFO("token 0 was always followed by 1, so P(1 | 0) = 1 and its log is 0; got "
       << row[1].item<double>());
  CHECK(row[1].item<double>() == within(0.0, 1e-6));
}

TEST_CASE("counts_logits_uniform_when_unfit_with_smoothing") {
  CountsBigramLM model(8, 1.0);
  const auto logits = model->logits(torch::tensor({0, 3}, torch::kLong));
  CHECK(close(logits, torch::full({2, 8}, std::log(1.0 / 8.0)), 1e-6));
}

TEST_CASE("counts_logits_accepts_2d_context") {
  CountsBigramLM model(10);
  model->fit(random_ids(100, 10));
  const auto flat = model->logits(torch::tensor({4, 7}, torch::kLong));
  const auto column = model->logits(torch::tensor({{4}, {7}}, torch::kLong));
  CHECK(column.sizes() == torch::IntArrayRef({2, 10}));
  CHECK(close(flat, column, 0.0));
}

// --- NeuralBigramLM --------------------------------------------------------------------------

TEST_CASE("neural_bigram_construction", "[clean]") {
  NeuralBigramLM model(10, 8);
  CHECK(model->vocab_size == 10);
  CHECK(model->embedding_dim == 8);
}

TEST_CASE("neural_bigram_context_length", "[clean]") {
  CHECK(NeuralBigramLM(10, 8)->context_length == 1);
}

TEST_CASE("neural_bigram_parameters_count", "[clean]") {
  CHECK(NeuralBigramLM(10, 8)->parameters().size() == 3);
}

TEST_CASE("neural_bigram_forward_shape") {
  NeuralBigramLM model(10, 8);
  CHECK(model->forward(torch::tensor({1, 2, 3, 4}, torch::kLong)).sizes() ==
        torch::IntArrayRef({4, 10}));
}

TEST_CASE("neural_bigram_forward_accepts_2d_context") {
  NeuralBigramLM model(10, 8);
  CHECK(model->forward(torch::tensor({{1}, {2}, {3}}, torch::kLong)).sizes() ==
        torch::IntArrayRef({3, 10}));
}

TEST_CASE("neural_bigram_forward_routes_gradients") {
  NeuralBigramLM model(10, 8);
  const auto logits = model->forward(torch::tensor({1, 2, 3}, torch::kLong));
  torch::nn::functional::cross_entropy(logits, torch::tensor({2, 3, 4}, torch::kLong)).backward();
  for (const auto& parameter : model->parameters()) {
    REQUIRE(parameter.grad().defined());
    CHECK(parameter.grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("neural_bigram_logits_alias") {
  NeuralBigramLM model(10, 8);
  const auto context = torch::tensor({1, 5, 9}, torch::kLong);
  CHECK(close(model->logits(context), model->forward(context), 0.0));
}

// --- MLPLanguageModel ------------------------------------------------------------------------

TEST_CASE("mlp_construction", "[clean]") {
  CHECK_NOTHROW(MLPLanguageModel(10, 2, 4, 8));
}

TEST_CASE("mlp_construction_stores_args", "[clean]") {
  MLPLanguageModel model(20, 3, 8, 32);
  CHECK(model->vocab_size == 20);
  CHECK(model->context_length == 3);
  CHECK(model->embedding_dim == 8);
  CHECK(model->hidden_dim == 32);
}

TEST_CASE("mlp_parameters_count", "[clean]") {
  CHECK(MLPLanguageModel(20, 3, 8, 32)->parameters().size() == 5);
}

TEST_CASE("mlp_forward_shape") {
  MLPLanguageModel model(20, 3, 8, 32);
  CHECK(model->forward(torch::randint(0, 20, {5, 3}, torch::kLong)).sizes() ==
        torch::IntArrayRef({5, 20}));
}

TEST_CASE("mlp_forward_shape_context_length_3") {
  MLPLanguageModel model(20, 3, 8, 32);
  const auto logits = model->forward(torch::tensor({{1, 2, 3}}, torch::kLong));
  CHECK(logits.sizes() == torch::IntArrayRef({1, 20}));
  CHECK(torch::isfinite(logits).all().item<bool>());
}

TEST_CASE("mlp_forward_routes_gradients") {
  MLPLanguageModel model(20, 3, 8, 32);
  const auto logits = model->forward(torch::randint(0, 20, {4, 3}, torch::kLong));
  torch::nn::functional::cross_entropy(logits, torch::tensor({0, 1, 2, 3}, torch::kLong))
      .backward();
  for (const auto& parameter : model->parameters()) {
    REQUIRE(parameter.grad().defined());
    CHECK(parameter.grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("mlp_forward_position_sensitive") {
  torch::manual_seed(0);
  MLPLanguageModel model(10, 2, 8, 16);
  const auto forward = model->forward(torch::tensor({{3, 7}}, torch::kLong));
  const auto backward = model->forward(torch::tensor({{7, 3}}, torch::kLong));
  CHECK_FALSE(torch::allclose(forward, backward, 0.0, 1e-3));
}

TEST_CASE("mlp_forward_concatenates_the_context_vectors_in_order") {
  // An edition addition: the flattened context is token 0's D numbers, then token 1's, ...
  MLPLanguageModel model(4, 2, 2, 4);  // V 4, N 2, D 2, H 4
  {
    torch::NoGradGuard no_grad;
    model->embedding->weight.copy_(
        torch::tensor({{0.1f, 0.2f}, {0.3f, 0.4f}, {0.5f, 0.6f}, {0.7f, 0.8f}}));
    model->hidden->W.copy_(torch::eye(4));  // hidden = the flattened context itself
    model->hidden->b.zero_();
    model->output->W.copy_(torch::eye(4));  // logits = tanh(hidden)
    model->output->b.zero_();
  }
  const auto logits = model->forward(torch::tensor({{1, 3}}, torch::kLong));
  const auto expected = torch::tanh(torch::tensor({{0.3f, 0.4f, 0.7f, 0.8f}}));
  INFO(
      "your logits " << logits << "\nexpected " << expected
                     << "\nFlatten the (B, N, D) vectors to (B, N*D) as they lie, token after "
                        "token (vectors.flatten(1) or view(B, -1)), not dimension after dimension");
  CHECK(close(logits, expected, 1e-6));
}

// --- get_batch (implemented for you) ---------------------------------------------------------

TEST_CASE("get_batch_shapes", "[clean]") {
  const auto batch = g2c::lm::get_batch(torch::arange(100, torch::kLong), 3, 16, seeded(0));
  CHECK(batch.x.sizes() == torch::IntArrayRef({16, 3}));
  CHECK(batch.y.sizes() == torch::IntArrayRef({16}));
}

TEST_CASE("get_batch_targets_immediately_follow_context", "[clean]") {
  // With ids = 0, 1, 2, ... a window starting at s is s .. s+N-1 and its target is s+N.
  const auto batch = g2c::lm::get_batch(torch::arange(100, torch::kLong), 4, 32, seeded(1));
  CHECK(torch::equal(batch.y, batch.x.select(1, 3) + 1));
  CHECK(torch::equal(batch.x.select(1, 1), batch.x.select(1, 0) + 1));
}

TEST_CASE("get_batch_too_short_raises", "[clean]") {
  CHECK_THROWS_AS(g2c::lm::get_batch(torch::arange(3, torch::kLong), 3, 4), g2c::ValueError);
}

// --- perplexity ------------------------------------------------------------------------------

TEST_CASE("perplexity_returns_float") {
  CountsBigramLM model(10);
  const auto ids = random_ids(200, 10);
  model->fit(ids);
  const double value = g2c::lm::perplexity(model, ids, 256, "cpu");
  CHECK(std::isfinite(value));
  CHECK(value >= 1.0);
}

TEST_CASE("perplexity_uniform_model_matches_vocab_size") {
  CountsBigramLM model(12, 1.0);  // unfit + smoothing: every row uniform
  const double value = g2c::lm::perplexity(model, random_ids(300, 12), 256, "cpu");
  CHECK(value == Approx(12.0).epsilon(1e-4));
}

TEST_CASE("perplexity_perfect_model_is_one") {
  // A cycle 0 1 2 3 4 0 1 ...: each token has exactly one successor, which unsmoothed counts know.
  CountsBigramLM model(5, 0.0);
  const auto ids = torch::tensor(repeated({0, 1, 2, 3, 4}, 40), torch::kLong);
  model->fit(ids);
  CHECK(g2c::lm::perplexity(model, ids, 256, "cpu") == within(1.0, 1e-3));
}

TEST_CASE("perplexity_counts_every_window_to_the_end") {
  // An edition addition: a stream of L ids has L - N windows, the last one included.
  FixedScoresLM model(torch::tensor({std::log(0.9), std::log(0.1)}), 1);
  const auto ids = torch::tensor({0, 0, 0, 0, 0, 1}, torch::kLong);  // targets 0 0 0 0 1
  const double expected = std::exp(-(4 * std::log(0.9) + std::log(0.1)) / 5);
  const double without_last = 1 / 0.9;
  const double ppl = g2c::lm::perplexity(model, ids, 2, "cpu");
  INFO("your perplexity " << ppl << "; over all 5 windows " << expected
                          << "; without the last window " << without_last
                          << "\nWindows start at 0 .. L - N - 1: there are L - N of them");
  CHECK(ppl == Approx(expected).epsilon(1e-6));
}

TEST_CASE("perplexity_works_for_neural_bigram") {
  NeuralBigramLM model(10, 8);
  const double value = g2c::lm::perplexity(model, random_ids(200, 10), 64, "cpu");
  CHECK(std::isfinite(value));
  CHECK(value > 1.0);
}

TEST_CASE("perplexity_works_for_mlp") {
  MLPLanguageModel model(10, 3, 8, 16);
  const double value = g2c::lm::perplexity(model, random_ids(200, 10), 64, "cpu");
  CHECK(std::isfinite(value));
  CHECK(value > 1.0);
}

// --- sample ----------------------------------------------------------------------------------

TEST_CASE("sample_length") {
  NeuralBigramLM model(10, 8);
  CHECK(g2c::lm::sample(model, {1, 2}, 7, 1.0, seeded(0), "cpu").size() == 9);
}

TEST_CASE("sample_preserves_prompt") {
  NeuralBigramLM model(10, 8);
  const auto ids = g2c::lm::sample(model, {4, 2, 9}, 5, 1.0, seeded(0), "cpu");
  CHECK(std::vector<std::int64_t>(ids.begin(), ids.begin() + 3) ==
        std::vector<std::int64_t>{4, 2, 9});
}

TEST_CASE("sample_token_range") {
  NeuralBigramLM model(10, 8);
  for (const auto id : g2c::lm::sample(model, {0}, 50, 1.0, seeded(0), "cpu")) {
    CHECK(id >= 0);
    CHECK(id < 10);
  }
}

TEST_CASE("sample_low_temperature_picks_the_top_token") {
  // An edition addition: temperature divides the logits, so T -> 0 sharpens towards argmax.
  FixedScoresLM model(torch::tensor({2.0, 0.0, 0.0, 0.0}), 1);
  const auto ids = g2c::lm::sample(model, {1}, 40, 0.05, seeded(3), "cpu");
  const auto top = std::count(ids.begin() + 1, ids.end(), 0);
  INFO(top << " of 40 tokens were the top-scoring one"
           << "\nSample from softmax(logits / temperature): dividing by T = 0.05 makes the top "
              "token's probability about 1 - 3e-17; multiplying by T flattens it towards uniform");
  CHECK(top == 40);
}

TEST_CASE("sample_works_for_counts_model") {
  CountsBigramLM model(5, 0.0);
  model->fit(torch::tensor(repeated({0, 1, 2, 3, 4}, 10), torch::kLong));
  // Unsmoothed counts of a cycle are deterministic: the sample continues the cycle.
  CHECK(g2c::lm::sample(model, {2}, 6, 1.0, seeded(0), "cpu") ==
        std::vector<std::int64_t>{2, 3, 4, 0, 1, 2, 3});
}

TEST_CASE("sample_works_for_mlp") {
  MLPLanguageModel model(10, 3, 8, 16);
  const auto ids = g2c::lm::sample(model, {1, 2, 3}, 4, 1.0, seeded(0), "cpu");
  CHECK(ids.size() == 7);
}

TEST_CASE("sample_short_prompt_raises_for_mlp") {
  MLPLanguageModel model(10, 3, 8, 16);
  CHECK_THROWS_AS(g2c::lm::sample(model, {1, 2}, 4, 1.0, seeded(0), "cpu"), g2c::ValueError);
}

// --- train_lm --------------------------------------------------------------------------------

TEST_CASE("train_lm_returns_dict_with_expected_keys") {
  NeuralBigramLM model(10, 8);
  const auto record = g2c::lm::train_lm(
      model, random_ids(200, 10), random_ids(50, 10, 1),
      TrainLMOptions().num_steps(10).log_every(5).generator(seeded(0)).device("cpu"));
  CHECK_FALSE(record.train_losses.empty());
  CHECK_FALSE(record.val_perplexities.empty());
}

TEST_CASE("train_lm_records_at_log_every") {
  NeuralBigramLM model(10, 8);
  const auto record = g2c::lm::train_lm(
      model, random_ids(200, 10), std::nullopt,
      TrainLMOptions().num_steps(20).log_every(5).generator(seeded(0)).device("cpu"));
  CHECK(record.train_losses.size() >= 4);
  CHECK(record.train_losses.size() <= 5);
}

TEST_CASE("train_lm_loss_decreases_on_easy_corpus") {
  torch::manual_seed(0);
  NeuralBigramLM model(2, 8);
  const auto ids = torch::tensor(repeated({0, 1}, 200), torch::kLong);
  const auto record = g2c::lm::train_lm(model, ids, std::nullopt,
                                        TrainLMOptions()
                                            .batch_size(16)
                                            .num_steps(200)
                                            .lr(0.5)
                                            .log_every(20)
                                            .generator(seeded(0))
                                            .device("cpu"));
  CHECK(record.train_losses.back() < 0.5 * record.train_losses.front());
}

TEST_CASE("train_lm_records_val_perplexity") {
  NeuralBigramLM model(10, 8);
  const auto record = g2c::lm::train_lm(
      model, random_ids(200, 10), random_ids(50, 10, 1),
      TrainLMOptions().num_steps(20).log_every(5).generator(seeded(0)).device("cpu"));
  CHECK(record.val_perplexities.size() == record.train_losses.size());
  for (const double value : record.val_perplexities) {
    CHECK(std::isfinite(value));
    CHECK(value > 1.0);
  }
}

TEST_CASE("train_lm_works_for_mlp") {
  torch::manual_seed(0);
  MLPLanguageModel model(3, 2, 8, 32);
  const auto ids = torch::tensor(repeated({0, 1, 2}, 100), torch::kLong);
  const auto record = g2c::lm::train_lm(model, ids, std::nullopt,
                                        TrainLMOptions()
                                            .batch_size(16)
                                            .num_steps(200)
                                            .lr(0.5)
                                            .log_every(20)
                                            .generator(seeded(0))
                                            .device("cpu"));
  CHECK(record.train_losses.back() < 0.7 * record.train_losses.front());
}

// --- On an accelerator -----------------------------------------------------------------------

// An addition of this edition, run where CUDA or MPS exists: the three models, perplexity and
// train_lm on the accelerator must match the CPU. A tensor your code leaves on the CPU (a
// torch::ones for the counts, an index, a target) fails here.
TEST_CASE("language_models_match_cpu_on_accelerator", "[accelerator]") {
  const std::optional<torch::Device> device = g2c::testing::accelerator_device();
  if (!device) G2C_SKIP(g2c::testing::kNoAccelerator);
  const std::string there = g2c::nn::device_name(*device);
  INFO("on " << there
             << ": every tensor your code creates must live on the model's device "
                "(the ids, contexts and targets moved with .to(device), new tensors made there)");
  const auto ids = random_ids(120, 8, 3);
  const auto contexts = torch::tensor({{1, 2}, {3, 4}, {5, 6}}, torch::kLong);
  {
    INFO("CountsBigramLM: fit and logits");
    CountsBigramLM on_cpu(8), moved(8);
    on_cpu->fit(ids);
    moved->to(*device);
    moved->fit(ids.to(*device));
    CHECK(torch::equal(moved->counts.cpu(), on_cpu->counts));
    CHECK(close(moved->logits(contexts.select(1, 1).to(*device)).cpu(),
                on_cpu->logits(contexts.select(1, 1)), 1e-5));
  }
  {
    INFO("NeuralBigramLM and MLPLanguageModel: forward and perplexity");
    torch::manual_seed(0);
    NeuralBigramLM bigram(8, 4);
    MLPLanguageModel mlp(8, 2, 4, 16);
    const auto bigram_cpu = bigram(contexts.select(1, 1));
    const auto mlp_cpu = mlp(contexts);
    const double bigram_perplexity = g2c::lm::perplexity(bigram, ids, 16, "cpu");
    const double mlp_perplexity = g2c::lm::perplexity(mlp, ids, 16, "cpu");
    bigram->to(*device);
    mlp->to(*device);
    CHECK(close(bigram(contexts.select(1, 1).to(*device)).cpu(), bigram_cpu, 1e-5));
    CHECK(close(mlp(contexts.to(*device)).cpu(), mlp_cpu, 1e-5));
    CHECK(g2c::lm::perplexity(bigram, ids, 16, there) == Approx(bigram_perplexity).epsilon(1e-4));
    CHECK(g2c::lm::perplexity(mlp, ids, 16, there) == Approx(mlp_perplexity).epsilon(1e-4));
  }
  {
    INFO("train_lm: the same batches give the same losses");
    auto train = [&](const std::string& where) {
      torch::manual_seed(0);
      MLPLanguageModel model(8, 2, 4, 16);
      return g2c::lm::train_lm(
          model, ids, ids,
          TrainLMOptions().num_steps(10).log_every(5).batch_size(8).generator(seeded(4)).device(
              where));
    };
    const auto on_cpu = train("cpu");
    const auto moved = train(there);
    REQUIRE(moved.train_losses.size() == on_cpu.train_losses.size());
    for (std::size_t i = 0; i < moved.train_losses.size(); ++i) {
      CHECK(moved.train_losses[i] == Approx(on_cpu.train_losses[i]).epsilon(1e-4));
      CHECK(moved.val_perplexities[i] == Approx(on_cpu.val_perplexities[i]).epsilon(1e-4));
    }
  }
}
