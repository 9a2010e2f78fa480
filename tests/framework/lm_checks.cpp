// Module 06 framework tests: the language models against direct LibTorch formulas, perplexity
// against one full-batch cross-entropy (and independent of the batch size), float64 gradients,
// sampling and training determinism, the training step against a hand-written SGD update,
// devices, and every bad-input message.
#include <cmath>
#include <sstream>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/lm/lm.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::lm::CountsBigramLM;
using g2c::lm::MLPLanguageModel;
using g2c::lm::NeuralBigramLM;
using g2c::lm::TrainLMOptions;
using g2c::testing::close;
using g2c::testing::max_abs_diff;

namespace {

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

torch::Tensor random_ids(std::int64_t count, std::int64_t vocab, std::uint64_t seed) {
  return torch::randint(0, vocab, {count}, seeded(seed), torch::kLong);
}

/// Every window of `ids` at once: contexts (W, N) and targets (W).
std::pair<torch::Tensor, torch::Tensor> all_windows(const torch::Tensor& ids, std::int64_t n) {
  const auto windows = ids.unfold(0, n + 1, 1);  // (W, N + 1)
  return {windows.slice(1, 0, n), windows.select(1, n)};
}

/// Perplexity from first principles: one cross-entropy over every window, no batching.
double perplexity_oracle(g2c::lm::LanguageModelImpl& model, const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  const auto [contexts, targets] = all_windows(ids, model.context_length);
  const auto log_probs = torch::log_softmax(model.logits(contexts).to(torch::kDouble), -1);
  return std::exp(-log_probs.gather(1, targets.unsqueeze(1)).mean().item<double>());
}

}  // namespace

TEST_CASE("counts_logits_match_the_smoothed_formula", "[lm]") {
  const double smoothing = GENERATE(0.5, 1.0, 3.0);
  CountsBigramLM model(7, smoothing);
  model->fit(random_ids(500, 7, 3));
  const auto counts = model->counts.to(torch::kDouble);
  const auto expected = ((counts + smoothing) / (counts + smoothing).sum(1, true)).log();
  CHECK(close(model->logits(torch::arange(7, torch::kLong)), expected, 1e-6));
}

TEST_CASE("counts_unseen_context_without_smoothing_is_uniform_not_nan", "[lm]") {
  CountsBigramLM model(4, 0.0);
  model->fit(torch::tensor({0, 1, 0, 1}, torch::kLong));  // token 3 is never a context
  const auto row = model->logits(torch::tensor({3}, torch::kLong));
  CHECK_FALSE(torch::isnan(row).any().item<bool>());
  CHECK(close(row, torch::full({1, 4}, std::log(0.25)), 1e-6));
}

TEST_CASE("counts_table_is_a_buffer_that_survives_save_and_load", "[lm]") {
  CountsBigramLM model(6);
  model->fit(random_ids(100, 6, 4));
  CHECK(model->parameters().empty());
  CHECK(model->named_buffers().contains("counts"));
  std::stringstream stream;
  torch::save(model, stream);
  CountsBigramLM loaded(6);
  torch::load(loaded, stream);
  CHECK(torch::equal(loaded->counts, model->counts));
}

TEST_CASE("neural_bigram_matches_embedding_then_affine", "[lm]") {
  torch::manual_seed(5);
  NeuralBigramLM model(11, 6);
  const auto context = random_ids(9, 11, 6);
  const auto expected =
      torch::nn::functional::embedding(context, model->embedding->weight).matmul(model->proj->W) +
      model->proj->b;
  CHECK(max_abs_diff(model(context), expected) < 1e-6);
}

TEST_CASE("mlp_matches_the_composed_formula", "[lm]") {
  torch::manual_seed(7);
  MLPLanguageModel model(13, 4, 5, 9);
  const auto context = torch::randint(0, 13, {6, 4}, torch::kLong);
  const auto flat =
      torch::nn::functional::embedding(context, model->embedding->weight).reshape({6, 20});
  const auto hidden = torch::nn::functional::linear(flat, model->hidden->W.t(), model->hidden->b);
  const auto expected =
      torch::nn::functional::linear(torch::tanh(hidden), model->output->W.t(), model->output->b);
  CHECK(max_abs_diff(model(context), expected) < 1e-5);
}

TEST_CASE("mlp_float64_gradients_match_finite_differences", "[lm]") {
  torch::manual_seed(8);
  MLPLanguageModel model(6, 2, 3, 4);
  model->to(torch::kDouble);
  const auto context = torch::randint(0, 6, {5, 2}, torch::kLong);
  const auto targets = torch::randint(0, 6, {5}, torch::kLong);
  auto objective = [&] { return torch::nn::functional::cross_entropy(model(context), targets); };
  g2c::testing::check_gradients(objective, model->parameters(), 1e-8);
}

TEST_CASE("perplexity_matches_one_full_batch_cross_entropy", "[lm]") {
  torch::manual_seed(9);
  MLPLanguageModel model(17, 3, 4, 8);
  const auto ids = random_ids(403, 17, 10);
  const double expected = perplexity_oracle(*model, ids);
  CHECK(g2c::lm::perplexity(model, ids, 256, "cpu") == Approx(expected).epsilon(1e-9));
}

TEST_CASE("perplexity_does_not_depend_on_the_batch_size", "[lm]") {
  // 400 windows: batch sizes that divide it and ones that leave a short last batch. Averaging the
  // batch means without weights would make the short batch count as much as a full one.
  torch::manual_seed(11);
  NeuralBigramLM model(9, 5);
  const auto ids = random_ids(401, 9, 12);
  const double whole = g2c::lm::perplexity(model, ids, 1000, "cpu");
  for (const std::int64_t batch_size : {1, 7, 64, 100, 399}) {
    INFO("batch_size " << batch_size);
    CHECK(g2c::lm::perplexity(model, ids, batch_size, "cpu") == Approx(whole).epsilon(1e-9));
  }
}

TEST_CASE("perplexity_of_a_uniform_model_is_the_vocabulary_size", "[lm]") {
  for (const std::int64_t vocab : {2, 5, 64, 1000}) {
    NeuralBigramLM model(vocab, 4);
    {
      torch::NoGradGuard no_grad;
      model->proj->W.zero_();  // every logit 0: uniform over the vocabulary
      model->proj->b.zero_();
    }
    INFO("vocab " << vocab);
    CHECK(g2c::lm::perplexity(model, random_ids(50, vocab, 13), 16, "cpu") ==
          Approx(static_cast<double>(vocab)).epsilon(1e-9));
  }
}

TEST_CASE("perplexity_rejects_bad_arguments", "[lm]") {
  MLPLanguageModel model(10, 3, 4, 8);
  CHECK_THROWS_WITH(g2c::lm::perplexity(model, torch::arange(3, torch::kLong), 8, "cpu"),
                    Contains("context_length + 1 = 4"));
  CHECK_THROWS_WITH(g2c::lm::perplexity(model, torch::arange(10, torch::kLong), 0, "cpu"),
                    Contains("batch_size >= 1"));
  CHECK_THROWS_WITH(g2c::lm::perplexity(model, torch::rand({20}), 8, "cpu"),
                    Contains("int64 token ids"));
}

TEST_CASE("get_batch_windows_come_from_the_stream", "[lm]") {
  const auto ids = random_ids(60, 50, 14);
  const std::int64_t n = 5;
  const auto batch = g2c::lm::get_batch(ids, n, 4000, seeded(15));
  // Recover each start from the stream: every (x, y) must be a real window.
  const auto [contexts, targets] = all_windows(ids, n);
  const auto windows = torch::cat({contexts, targets.unsqueeze(1)}, 1);       // (W, N + 1)
  const auto drawn = torch::cat({batch.x, batch.y.unsqueeze(1)}, 1);          // (B, N + 1)
  const auto matches = (drawn.unsqueeze(1) == windows.unsqueeze(0)).all(-1);  // (B, W)
  CHECK(matches.any(1).all().item<bool>());
  // 4000 draws over 55 starts: every start appears, the last one (n - N - 1) included.
  CHECK(matches.any(0).all().item<bool>());
}

TEST_CASE("get_batch_is_deterministic_for_a_seed", "[lm]") {
  const auto ids = torch::arange(100, torch::kLong);
  const auto first = g2c::lm::get_batch(ids, 3, 8, seeded(16));
  const auto second = g2c::lm::get_batch(ids, 3, 8, seeded(16));
  CHECK(torch::equal(first.x, second.x));
  CHECK(torch::equal(first.y, second.y));
}

TEST_CASE("as_context_rejects_bad_contexts", "[lm]") {
  MLPLanguageModel model(10, 3, 4, 8);
  CHECK_THROWS_WITH(model(torch::zeros({2, 3})), Contains("integer token ids"));
  CHECK_THROWS_WITH(model(torch::zeros({2, 2}, torch::kLong)), Contains("(B, N=3)"));
  CHECK_THROWS_WITH(model(torch::full({1, 3}, 10, torch::kLong)), Contains("[0, 10)"));
  NeuralBigramLM bigram(10, 4);
  CHECK_THROWS_WITH(bigram(torch::zeros({2, 2}, torch::kLong)), Contains("(B) or (B, N=1)"));
}

TEST_CASE("sample_is_deterministic_for_a_seed", "[lm]") {
  torch::manual_seed(17);
  MLPLanguageModel model(20, 2, 4, 8);
  const auto first = g2c::lm::sample(model, {1, 2}, 30, 1.0, seeded(18), "cpu");
  const auto second = g2c::lm::sample(model, {1, 2}, 30, 1.0, seeded(18), "cpu");
  CHECK(first == second);
}

TEST_CASE("sample_at_low_temperature_follows_the_argmax", "[lm]") {
  torch::manual_seed(19);
  NeuralBigramLM model(12, 6);
  const auto ids = g2c::lm::sample(model, {3}, 10, 1e-4, seeded(20), "cpu");
  torch::NoGradGuard no_grad;
  for (std::size_t i = 1; i < ids.size(); ++i) {
    const auto greedy =
        model(torch::tensor({ids[i - 1]}, torch::kLong)).argmax(-1).item<std::int64_t>();
    CHECK(ids[i] == greedy);
  }
}

TEST_CASE("sample_rejects_bad_arguments", "[lm]") {
  NeuralBigramLM model(10, 4);
  CHECK_THROWS_WITH(g2c::lm::sample(model, {1}, 5, 0.0, seeded(0), "cpu"),
                    Contains("temperature must be > 0"));
  CHECK_THROWS_WITH(g2c::lm::sample(model, {1}, -1, 1.0, seeded(0), "cpu"),
                    Contains("num_tokens must be >= 0"));
  CHECK_THROWS_WITH(g2c::lm::sample(model, {12}, 5, 1.0, seeded(0), "cpu"), Contains("[0, 10)"));
  CHECK_THROWS_WITH(g2c::lm::sample(model, {}, 5, 1.0, seeded(0), "cpu"), Contains("prompt has 0"));
}

TEST_CASE("train_lm_is_deterministic_for_a_seed", "[lm]") {
  const auto train = random_ids(300, 15, 21);
  const auto val = random_ids(80, 15, 22);
  auto run = [&] {
    torch::manual_seed(23);
    MLPLanguageModel model(15, 3, 4, 16);
    return g2c::lm::train_lm(
        model, train, val,
        TrainLMOptions().num_steps(30).log_every(10).generator(seeded(24)).device("cpu"));
  };
  const auto first = run();
  const auto second = run();
  CHECK(first.steps == std::vector<std::int64_t>{0, 10, 20, 29});
  CHECK(first.steps == second.steps);
  CHECK(first.train_losses == second.train_losses);
  CHECK(first.val_perplexities == second.val_perplexities);
}

TEST_CASE("train_lm_step_is_the_sgd_update", "[lm]") {
  const double lr = 0.3;
  const double weight_decay = 0.01;
  const auto train = random_ids(100, 8, 25);
  torch::manual_seed(26);
  NeuralBigramLM model(8, 4);
  NeuralBigramLM twin(8, 4);
  {
    torch::NoGradGuard no_grad;
    for (auto& item : twin->named_parameters()) {
      item.value().copy_(model->named_parameters()[item.key()]);
    }
  }
  g2c::lm::train_lm(model, train, std::nullopt,
                    TrainLMOptions()
                        .num_steps(1)
                        .batch_size(10)
                        .lr(lr)
                        .weight_decay(weight_decay)
                        .generator(seeded(27))
                        .device("cpu"));
  // The same batch by hand, then p <- p - lr (grad + weight_decay p).
  const auto batch = g2c::lm::get_batch(train, 1, 10, seeded(27));
  torch::nn::functional::cross_entropy(twin(batch.x), batch.y).backward();
  torch::NoGradGuard no_grad;
  for (const auto& item : twin->named_parameters()) {
    const auto& parameter = item.value();
    const auto expected = parameter - lr * (parameter.grad() + weight_decay * parameter);
    INFO(item.key());
    CHECK(close(model->named_parameters()[item.key()], expected, 1e-6));
  }
}

TEST_CASE("train_lm_calls_on_log_at_every_logged_step", "[lm]") {
  NeuralBigramLM model(6, 4);
  std::vector<std::int64_t> seen;
  g2c::lm::train_lm(model, random_ids(100, 6, 28), std::nullopt,
                    TrainLMOptions()
                        .num_steps(12)
                        .log_every(4)
                        .generator(seeded(29))
                        .device("cpu")
                        .on_log([&](const g2c::lm::TrainLogEntry& entry) {
                          CHECK(std::isfinite(entry.train_loss));
                          CHECK_FALSE(entry.val_perplexity.has_value());
                          seen.push_back(entry.step);
                        }));
  CHECK(seen == std::vector<std::int64_t>{0, 4, 8, 11});
}

TEST_CASE("train_lm_rejects_bad_arguments", "[lm]") {
  CountsBigramLM counts(6);
  CHECK_THROWS_WITH(g2c::lm::train_lm(counts, random_ids(50, 6, 30)), Contains("fit(ids)"));
  NeuralBigramLM model(6, 4);
  CHECK_THROWS_WITH(g2c::lm::train_lm(model, random_ids(50, 6, 30), std::nullopt,
                                      TrainLMOptions().log_every(0).device("cpu")),
                    Contains(">= 1"));
  CHECK_THROWS_WITH(g2c::lm::train_lm(model, random_ids(50, 6, 30), std::nullopt,
                                      TrainLMOptions().lr(-1.0).device("cpu")),
                    Contains("lr > 0"));
  CHECK_THROWS_WITH(g2c::lm::train_lm(model, torch::arange(1, torch::kLong), std::nullopt,
                                      TrainLMOptions().device("cpu")),
                    Contains("train_ids has 1 tokens"));
  CHECK_THROWS_WITH(g2c::lm::train_lm(model, random_ids(50, 6, 30), torch::arange(1, torch::kLong),
                                      TrainLMOptions().device("cpu")),
                    Contains("val_ids has 1 tokens"));
}

TEST_CASE("train_lm_honours_the_cpu_device", "[lm]") {
  NeuralBigramLM model(6, 4);
  g2c::lm::train_lm(model, random_ids(50, 6, 31), std::nullopt,
                    TrainLMOptions().num_steps(2).generator(seeded(32)).device("cpu"));
  for (const auto& parameter : model->parameters()) CHECK(parameter.device().is_cpu());
}

TEST_CASE("train_lm_perplexity_and_sample_run_on_cuda", "[lm]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  torch::manual_seed(33);
  MLPLanguageModel model(12, 3, 4, 16);
  const auto train = random_ids(300, 12, 34);
  const auto record = g2c::lm::train_lm(
      model, train, train, TrainLMOptions().num_steps(20).log_every(10).device("cuda"));
  for (const auto& parameter : model->parameters()) CHECK(parameter.device().is_cuda());
  CHECK(std::isfinite(record.val_perplexities.back()));
  const double on_cuda = g2c::lm::perplexity(model, train, 64, "cuda");
  const double on_cpu = g2c::lm::perplexity(model, train, 64, "cpu");
  CHECK(on_cuda == Approx(on_cpu).epsilon(1e-4));
  CHECK(g2c::lm::sample(model, {1, 2, 3}, 5, 1.0, seeded(35), "cuda").size() == 8);
}

TEST_CASE("unavailable_device_is_a_value_error", "[lm]") {
  if (torch::cuda::is_available()) G2C_SKIP("CUDA is available: nothing to reject");
  NeuralBigramLM model(6, 4);
  CHECK_THROWS_AS(g2c::lm::perplexity(model, random_ids(20, 6, 36), 8, "cuda"), g2c::ValueError);
}
