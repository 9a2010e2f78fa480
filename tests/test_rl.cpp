// Beyond module rl course tests: one for one with the Python edition's tests/test_rl.py (its
// parametrized tests as one test with sections), plus the additions listed in
// tests/course_tests.txt. Tests tagged [clean] pass on the scaffold: the verifiers, the task
// builders, sample_group's checks and the trainer's construction are provided.
//
// Suggested order: group_advantages (advantages_*), completion_log_prob (log_prob_*: a table-lookup
// fake, so every number is checkable by hand) and grpo_loss (grpo_loss_*: gradient_direction is
// the sign convention — descent must RAISE the log-prob of a better-than-average completion), all
// in g2c/rl/grpo.cpp; then GRPOTrainer::train_step in g2c/rl/trainer.cpp (trainer_*), which drives
// a real tiny TransformerLM through a whole update and so also needs modules 09 and 11 and 03b's
// AdamW (yours, or `-DG2C_SOLUTIONS=03-11,rl`).
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "char_codec.h"
#include "g2c/core/errors.h"
#include "g2c/inference/local.h"
#include "g2c/rl/grpo.h"
#include "g2c/rl/sample.h"
#include "g2c/rl/trainer.h"
#include "g2c/rl/verifiers.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::rl::arithmetic_choice_task;
using g2c::rl::completion_log_prob;
using g2c::rl::format_task;
using g2c::rl::group_advantages;
using g2c::rl::grpo_loss;
using g2c::rl::GRPOOptions;
using g2c::rl::GRPOTrainer;
using g2c::rl::sample_group;
using g2c::rl::SampleGroupOptions;
using g2c::rl::Task;
using g2c::rl::verify_arithmetic;
using g2c::rl::verify_arithmetic_sloppy;
using g2c::rl::verify_format;
using g2c::testing::close;
using g2c::transformer::TransformerLM;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// Deterministic logits: forward(ids)[b, t] = table[ids[b, t]]. The next token's distribution
/// depends only on the current token, so every log-probability is log_softmax(table) at a known
/// place. The table is a parameter (requires_grad), as a model's weights are.
class StubLM : public g2c::sampling::ScoringModel {
 public:
  explicit StubLM(std::int64_t vocab_size = 8, std::int64_t max_seq_len = 32)
      : vocab_(vocab_size), window_(max_seq_len) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(1234);
    table = torch::randn({vocab_size, vocab_size}, generator).requires_grad_(true);
  }
  torch::Tensor forward(const torch::Tensor& ids) override { return table.index({ids}); }
  std::int64_t max_seq_len() const override { return window_; }
  std::int64_t vocab_size() const override { return vocab_; }
  torch::Device device() const override { return torch::kCPU; }

  torch::Tensor table;  // (V, V): row a = the logits after token a

 private:
  std::int64_t vocab_, window_;
};

/// One id per character of "0123456789+= " (V 13), the Python edition's character tokenizer.
g2c::testing::CharacterCodec CharTokenizer() {
  return g2c::testing::CharacterCodec("0123456789+= ");
}

std::shared_ptr<const g2c::inference::TextCodec> char_tokenizer() {
  return std::make_shared<g2c::testing::CharacterCodec>(CharTokenizer());
}

/// A real tiny model: V 13 (the characters above), D 16, one block, two heads, context 48.
TransformerLM tiny_policy() {
  torch::manual_seed(9);
  return TransformerLM(/*vocab_size=*/13, /*embedding_dim=*/16, /*num_layers=*/1, /*num_heads=*/2,
                       /*max_seq_len=*/48);
}

Task addition(std::string prompt, std::int64_t answer) {
  return {std::move(prompt), answer, {}, ""};
}

torch::Tensor t1(const std::vector<double>& values) {
  return torch::tensor(values, torch::kFloat);
}

/// The policy's parameters, copied: what a step must change (or must not).
std::vector<torch::Tensor> snapshot(const TransformerLM& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

bool unchanged(const TransformerLM& model, const std::vector<torch::Tensor>& before) {
  const auto now = model->parameters();
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (!torch::equal(now[i].detach(), before[i])) return false;
  }
  return true;
}

bool any_grad(const TransformerLM& model) {
  for (const auto& p : model->parameters()) {
    if (p.grad().defined()) return true;
  }
  return false;
}

}  // namespace

// --- Provided plumbing: green from the start -----------------------------------------------------

TEST_CASE("verify_arithmetic_scores_the_last_integer", "[clean]") {
  const auto task = addition("23+58=", 81);
  CHECK(verify_arithmetic(task, "23+58 is 70 plus 11, so 81") == 1.0);
  CHECK(verify_arithmetic(task, "81 no wait, 91") == 0.0);
  CHECK(verify_arithmetic(task, "no numbers here") == 0.0);
}

TEST_CASE("verify_arithmetic_sloppy_is_exploitable", "[clean]") {
  // The deliberately broken reward: digit salad gets full marks.
  const auto task = addition("23+58=", 81);
  const std::string salad = "10 20 30 40 50 60 70 80 81 90";
  CHECK(verify_arithmetic_sloppy(task, salad) == 1.0);
  CHECK(verify_arithmetic(task, salad) == 0.0);
}

TEST_CASE("verify_format_checks_shape_not_value", "[clean]") {
  const auto task = addition("…", 81);
  CHECK(verify_format(task, R"(Sure: {"answer": 999})") == 1.0);
  CHECK(verify_format(task, "the answer is 81") == 0.0);
  CHECK(verify_format(task, "{broken json") == 0.0);
}

TEST_CASE("format_task_primes_a_discoverable_json_completion", "[clean]") {
  std::mt19937_64 rng(0);
  const auto task = format_task(rng);
  const std::string opening = R"({"answer":)";
  REQUIRE(task.prompt.size() >= opening.size());
  CHECK(task.prompt.substr(task.prompt.size() - opening.size()) == opening);
  CHECK(verify_format(task, "123}") == 1.0);
  CHECK(verify_format(task, R"(123, "extra": true})") == 1.0);
  CHECK(verify_format(task, "123} trailing text") == 1.0);
  CHECK(verify_format(task, "not JSON") == 0.0);
}

TEST_CASE("arithmetic_choice_task_has_one_correct_option", "[clean]") {
  std::mt19937_64 rng(0);
  const auto task = arithmetic_choice_task(rng);
  REQUIRE(task.choices.size() == 2);
  CHECK(std::set<std::int64_t>(task.choices.begin(), task.choices.end()).count(task.answer) == 1);
  CHECK(task.choices[0] != task.choices[1]);
  for (const auto choice : task.choices) {
    INFO("the prompt " << task.prompt << " lists " << choice);
    CHECK(task.prompt.find(std::to_string(choice)) != std::string::npos);
  }
}

TEST_CASE("sample_group_validates_inputs", "[clean]") {
  // Checked before the model or the tokenizer is touched: an empty model holder is fine here.
  TransformerLM none{nullptr};
  const auto tokenizer = CharTokenizer();
  CHECK_THROWS_AS(sample_group(none, tokenizer, "p", /*k=*/1), g2c::ValueError);
  CHECK_THROWS_AS(
      sample_group(none, tokenizer, "p", /*k=*/4, SampleGroupOptions().temperature(0.0)),
      g2c::ValueError);
}

// --- group_advantages
// ------------------------------------------------------------------------------

TEST_CASE("advantages_known_values", "[todo]") {
  const auto advantages = group_advantages(t1({1.0, 0.0, 0.0, 1.0}));
  INFO("got " << advantages
              << ": mean 0.5 and POPULATION std 0.5 (divide by K, not K - 1) give [1, -1, -1, 1]");
  CHECK(close(advantages, t1({1.0, -1.0, -1.0, 1.0}), 1e-5, 1e-5));
}

TEST_CASE("advantages_zero_mean_unit_std", "[todo]") {
  torch::manual_seed(0);
  const auto advantages = group_advantages(torch::rand({16}));
  const double mean = advantages.mean().item<double>();
  const double spread = advantages.std(/*unbiased=*/false).item<double>();
  INFO("mean " << mean << ", population std " << spread);
  CHECK(std::abs(mean) < 1e-5);
  CHECK(std::abs(spread - 1.0) < 1e-4);
}

TEST_CASE("advantages_degenerate_group_is_all_zeros", "[todo]") {
  for (const double value : {0.0, 1.0}) {
    DYNAMIC_SECTION("value " << value) {
      const auto advantages = group_advantages(torch::full({8}, value));
      INFO("every attempt scored " << value << ": std 0, no signal — all zeros, not NaN; got "
                                   << advantages);
      CHECK((advantages == 0).all().item<bool>());
    }
  }
}

// --- completion_log_prob
// ---------------------------------------------------------------------------

TEST_CASE("log_prob_matches_hand_computation", "[todo]") {
  StubLM model;
  const auto ids = torch::tensor({{3, 1, 4, 1, 5}}, torch::kLong);
  const auto got = completion_log_prob(model, ids, /*prompt_len=*/2);

  const auto lp = torch::log_softmax(model.table, -1);
  // The completion tokens are ids[2:], predicted from positions 1 .. 3.
  const auto expected = (lp[1][4] + lp[4][1] + lp[1][5]).reshape({1});
  INFO("got " << got << ", expected " << expected
              << " = log p(4 | 1) + log p(1 | 4) + log p(5 | 1): the completion's tokens only");
  CHECK(close(got, expected, 1e-5, 1e-5));
}

TEST_CASE("log_prob_excludes_the_prompt", "[todo]") {
  // Two rows with different PROMPTS but the same continuation-relevant suffix score identically:
  // with prompt_len 2 the completion is read at positions 1 .. 2, which hold 2 and 6 in both.
  StubLM model;
  const auto a = torch::tensor({{0, 2, 6, 7}}, torch::kLong);
  const auto b = torch::tensor({{5, 2, 6, 7}}, torch::kLong);
  CHECK(close(completion_log_prob(model, a, 2), completion_log_prob(model, b, 2), 1e-8, 1e-5));
}

TEST_CASE("log_prob_rejects_bad_prompt_len", "[todo]") {
  StubLM model;
  for (const std::int64_t bad_len : {0, 5, 9}) {
    DYNAMIC_SECTION("prompt_len " << bad_len) {
      CHECK_THROWS_AS(completion_log_prob(model, torch::zeros({1, 5}, torch::kLong), bad_len),
                      g2c::ValueError);
    }
  }
}

TEST_CASE("log_prob_scores_each_row_of_a_batch", "[todo]") {
  // One forward for B rows, one sum per row: a sum over the whole batch is a single number.
  StubLM model;
  const auto ids = torch::tensor({{3, 1, 4, 1, 5}, {2, 7, 1, 6, 2}}, torch::kLong);
  const auto got = completion_log_prob(model, ids, /*prompt_len=*/3);
  const auto lp = torch::log_softmax(model.table, -1);
  const auto expected = torch::stack({lp[4][1] + lp[1][5], lp[1][6] + lp[6][2]});
  INFO("got " << got << ": ids (B, T) -> (B), row b the sum over its own completion tokens");
  CHECK(close(got, expected, 1e-5, 1e-5));
}

// --- grpo_loss
// ------------------------------------------------------------------------------------

TEST_CASE("grpo_loss_without_leash_is_pure_policy_gradient", "[todo]") {
  const auto logp = t1({-1.0, -2.0, -3.0}).requires_grad_(true);
  const auto advantages = t1({1.0, 0.0, -1.0});
  const auto loss = grpo_loss(logp, logp.detach(), advantages, /*kl_coef=*/0.0);
  INFO("got " << loss.item<double>() << ": with kl_coef 0 the loss is -mean(A · logp)");
  CHECK(close(loss, -(advantages * logp.detach()).mean(), 1e-6, 1e-5));
}

TEST_CASE("grpo_loss_kl_is_zero_at_the_reference", "[todo]") {
  const auto logp = t1({-1.0, -2.0}).requires_grad_(true);
  const auto advantages = t1({1.0, -1.0});
  const auto at_ref = grpo_loss(logp, logp.detach(), advantages, /*kl_coef=*/10.0);
  const auto no_kl = grpo_loss(logp, logp.detach(), advantages, /*kl_coef=*/0.0);
  INFO("at the reference d = 0 and e^0 - 0 - 1 = 0: the leash costs nothing; got "
       << at_ref.item<double>() << " against " << no_kl.item<double>());
  CHECK(close(at_ref, no_kl, 1e-6, 1e-5));
}

TEST_CASE("grpo_loss_kl_penalizes_drift", "[todo]") {
  const auto logp = t1({-1.0, -2.0}).requires_grad_(true);
  const auto ref = t1({-1.5, -1.0});
  const auto advantages = t1({1.0, -1.0});
  const double drifted = grpo_loss(logp, ref, advantages, /*kl_coef=*/1.0).item<double>();
  const double anchored = grpo_loss(logp, ref, advantages, /*kl_coef=*/0.0).item<double>();
  INFO("away from the reference the KL term is > 0: " << drifted << " against " << anchored);
  CHECK(drifted > anchored);
}

TEST_CASE("grpo_loss_kl_term_is_the_k3_estimate", "[todo]") {
  // d = ref − logp = [−0.5, 1]: mean(eᵈ − d − 1) = (e^−0.5 − 0.5 + e − 2) / 2. The drift test
  // above holds for any positive leash (d the other way round, a sum over the group, …); this one
  // pins the estimator.
  const auto logp = t1({-1.0, -2.0}).requires_grad_(true);
  const auto ref = t1({-1.5, -1.0});
  const auto advantages = t1({1.0, -1.0});
  const double kl = grpo_loss(logp, ref, advantages, 1.0).item<double>() -
                    grpo_loss(logp, ref, advantages, 0.0).item<double>();
  const double expected = (std::exp(-0.5) - 0.5 + std::exp(1.0) - 2.0) / 2.0;
  INFO("the leash's term is mean(exp(d) - d - 1) with d = ref_logp - logp; got "
       << kl << ", expected " << expected);
  CHECK(kl == Approx(expected).epsilon(1e-5));
}

TEST_CASE("grpo_loss_gradient_direction", "[todo]") {
  // Gradient DESCENT must raise the log-prob of the above-average completion and lower the other.
  auto logp = t1({-1.0, -1.0}).requires_grad_(true);
  const auto advantages = t1({1.0, -1.0});
  grpo_loss(logp, logp.detach(), advantages, /*kl_coef=*/0.0).backward();
  REQUIRE(logp.grad().defined());
  INFO("d loss / d logp = " << logp.grad() << ": minus the advantage, over K");
  CHECK(logp.grad()[0].item<double>() < 0.0);  // a descent step increases logp[0]
  CHECK(logp.grad()[1].item<double>() > 0.0);  // and decreases logp[1]
}

TEST_CASE("grpo_loss_treats_advantages_and_the_reference_as_constants", "[todo]") {
  // Both arrive here as plain tensors in the trainer, so forgetting a detach changes no number in
  // the tests above; it changes where the gradient goes. The leash pulls the policy towards a
  // fixed reference, never the reference towards the policy.
  auto logp = t1({-1.0, -2.0}).requires_grad_(true);
  auto ref = t1({-1.5, -1.0}).requires_grad_(true);
  auto advantages = t1({1.0, -1.0}).requires_grad_(true);
  grpo_loss(logp, ref, advantages, /*kl_coef=*/1.0).backward();
  CHECK(logp.grad().defined());
  {
    INFO("ref_logp received a gradient: detach it (d = ref_logp.detach() - logp)");
    CHECK_FALSE(ref.grad().defined());
  }
  {
    INFO("the advantages received a gradient: they are constants (advantages.detach() * logp)");
    CHECK_FALSE(advantages.grad().defined());
  }
}

// --- GRPOTrainer: one full update on a real tiny model (modules 09, 11 and 03b too) -------------

TEST_CASE("trainer_smoke", "[todo]") {
  GRPOTrainer trainer(
      tiny_policy(), tiny_policy(), char_tokenizer(), {addition("12+34=", 46)},
      [](const Task&, std::string_view text) {
        return text.find('1') != std::string_view::npos ? 1.0 : 0.0;
      },
      GRPOOptions().group_size(4).max_new_tokens(6).seed(0));
  const auto metrics = trainer.train_step();
  const auto json = metrics.to_json();
  std::set<std::string> keys;
  for (const auto& item : json.items()) keys.insert(item.key());
  CHECK(keys == std::set<std::string>{"loss", "mean_reward", "kl", "sample_entropy", "skipped"});
  REQUIRE((metrics.skipped == 0.0 || metrics.skipped == 1.0));
  if (metrics.skipped == 1.0) {
    CHECK(std::isnan(metrics.kl));
    CHECK(std::isnan(metrics.sample_entropy));
  } else {
    CHECK(std::isfinite(metrics.loss));
    CHECK(metrics.kl >= 0.0);
    CHECK(metrics.sample_entropy >= 0.0);
    CHECK(trainer.step_count == 1);
  }
}

TEST_CASE("trainer_updates_the_policy_on_a_mixed_group", "[todo]") {
  // The smoke test above passes whichever way its random group falls; a verifier that alternates
  // 1, 0, 1, 0 makes every group mixed, so this one always runs the update, and replays the group
  // to check the step's loss and diagnostics.
  int calls = 0;
  auto policy = tiny_policy(), reference = tiny_policy();
  const auto policy_before = snapshot(policy), reference_before = snapshot(reference);
  GRPOTrainer trainer(
      policy, reference, char_tokenizer(), {addition("12+34=", 46)},
      [&calls](const Task&, std::string_view) { return (calls++ % 2 == 0) ? 1.0 : 0.0; },
      GRPOOptions().group_size(4).max_new_tokens(6).lr(1e-2).seed(0));
  const auto metrics = trainer.train_step();
  INFO("loss " << metrics.loss << ", mean_reward " << metrics.mean_reward << ", kl " << metrics.kl
               << ", sample_entropy " << metrics.sample_entropy << ", skipped " << metrics.skipped);
  CHECK(calls == 4);  // one verdict per completion
  CHECK(metrics.mean_reward == Approx(0.5));
  REQUIRE(metrics.skipped == 0.0);
  CHECK(std::isfinite(metrics.loss));
  // Policy and reference start equal, so the leash reads exactly 0 before the update.
  CHECK(metrics.kl == within(0.0, 1e-6));
  CHECK(trainer.step_count == 1);
  {
    // The same group again: the same starting weights and a generator of the same seed, used by
    // sample_group alone. Rewards 1, 0, 1, 0 give A = [1, −1, 1, −1].
    auto twin = tiny_policy();
    const auto group = sample_group(twin, CharTokenizer(), "12+34=", 4,
                                    SampleGroupOptions().max_new_tokens(6).generator(
                                        at::make_generator<at::CPUGeneratorImpl>(0)));
    torch::NoGradGuard no_grad;
    double loss = 0.0, entropy = 0.0;
    for (std::size_t k = 0; k < 4; ++k) {
      const auto row = torch::cat({group.prompt_ids, group.completions[k]}).unsqueeze(0);
      const double logp = completion_log_prob(twin, row, group.prompt_ids.numel()).item<double>();
      loss += -(k % 2 == 0 ? 1.0 : -1.0) * logp / 4.0;
      entropy += -logp / static_cast<double>(group.completions[k].numel()) / 4.0;
    }
    INFO(
        "the step's numbers are its group's: loss = -mean(A · logp) (the leash is 0 here), "
        "sample_entropy = mean(-logp / n_k), the completion's length n_k; expected loss "
        << loss << ", sample_entropy " << entropy);
    CHECK(metrics.loss == Approx(loss).epsilon(1e-4));
    CHECK(metrics.sample_entropy == Approx(entropy).epsilon(1e-4));
  }
  {
    INFO("a mixed group must move the policy: zero_grad, backward, optimizer->step()");
    CHECK_FALSE(unchanged(policy, policy_before));
  }
  {
    INFO(
        "the reference is never updated and never reached by the gradient: score it under a "
        "NoGradGuard, and detach ref_logp in the loss");
    CHECK(unchanged(reference, reference_before));
    CHECK_FALSE(any_grad(reference));
  }
}

TEST_CASE("trainer_skips_a_degenerate_group", "[todo]") {
  // Every completion scores 0: advantages all zero, nothing to learn. Skip without an update.
  auto policy = tiny_policy();
  const auto before = snapshot(policy);
  GRPOTrainer trainer(
      policy, tiny_policy(), char_tokenizer(), {addition("12+34=", 46)},
      [](const Task&, std::string_view) { return 0.0; },
      GRPOOptions().group_size(4).max_new_tokens(6).lr(1e-2).seed(0));
  const auto metrics = trainer.train_step();
  INFO(
      "a degenerate group returns {loss 0, mean_reward, kl NaN, sample_entropy NaN, skipped 1} "
      "and leaves the policy and step_count alone; got loss "
      << metrics.loss << ", kl " << metrics.kl << ", skipped " << metrics.skipped);
  CHECK(metrics.skipped == 1.0);
  CHECK(metrics.loss == 0.0);
  CHECK(metrics.mean_reward == 0.0);
  CHECK(std::isnan(metrics.kl));
  CHECK(std::isnan(metrics.sample_entropy));
  CHECK(trainer.step_count == 0);
  CHECK(unchanged(policy, before));
}

TEST_CASE("trainer_requires_tasks", "[clean]") {
  TransformerLM none{nullptr};
  CHECK_THROWS_AS(GRPOTrainer(none, none, char_tokenizer(), {}, verify_arithmetic),
                  g2c::ValueError);
}

TEST_CASE("trainer_requires_unit_sampling_temperature", "[clean]") {
  CHECK_THROWS_MATCHES(
      GRPOTrainer(tiny_policy(), tiny_policy(), char_tokenizer(), {addition("12+34=", 46)},
                  verify_arithmetic, GRPOOptions().temperature(0.8)),
      g2c::ValueError, MessageContains("temperature=1.0"));
}
