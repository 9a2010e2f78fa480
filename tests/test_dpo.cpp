// Module 14 course tests: direct preference optimisation, one for one with the Python edition's
// tests/test_dpo.py, plus the additions listed in tests/course_tests.txt. Tests tagged [clean]
// pass on the scaffold: they check PreferenceExample and the trainer's construction, which are
// implemented for you.
//
// Suggested order: pad_and_collate_pref (pad_and_collate_pref_*), sequence_logprob
// (sequence_logprob_*), dpo_loss (dpo_loss_*) — independent pieces: dpo_loss takes (B,) log-probs
// directly — then DPOTrainer::train_step (dpo_trainer_*), which runs a tiny TransformerLM (V 64,
// D 8, L 1, H 2, max_seq_len 12) and a copy of it as the reference, and so also needs modules
// 03–10 written (or `-DG2C_SOLUTIONS=03-10`).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/dpo/dpo.h"
#include "g2c/nn/device.h"
#include "g2c/nn/optim.h"
#include "g2c/training/clip.h"
#include "g2c/training/schedule.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "recipe_check.h"
#include "torch_test.h"

using g2c::dpo::dpo_loss;
using g2c::dpo::DPOTrainer;
using g2c::dpo::DPOTrainerOptions;
using g2c::dpo::pad_and_collate_pref;
using g2c::dpo::PreferenceExample;
using g2c::dpo::sequence_logprob;
using g2c::testing::with_recipe;
using g2c::training::cosine_with_warmup;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;
using Ids = std::vector<std::int64_t>;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

const double kLn2 = std::log(2.0);

Ids row(const torch::Tensor& t) {
  const auto values = t.to(torch::kLong).contiguous();
  return Ids(values.data_ptr<std::int64_t>(), values.data_ptr<std::int64_t>() + values.numel());
}

torch::Tensor t1(std::vector<double> values) {
  return torch::tensor(values, torch::kFloat);
}

/// 1 layer, D 8, V 64, max_seq_len 12: forward and backward in milliseconds.
TransformerLM make_tiny_model() {
  return TransformerLM(TransformerLMOptions(/*vocab_size=*/64, /*embedding_dim=*/8,
                                            /*num_layers=*/1, /*num_heads=*/2,
                                            /*max_seq_len=*/12));
}

/// Python's copy.deepcopy: a second model with its own tensors holding the same values.
TransformerLM clone_model(const TransformerLM& model) {
  TransformerLM copy(model->options);
  torch::NoGradGuard no_grad;
  auto to = copy->named_parameters();
  for (const auto& item : model->named_parameters()) to[item.key()].copy_(item.value());
  auto to_buffers = copy->named_buffers();
  for (const auto& item : model->named_buffers()) to_buffers[item.key()].copy_(item.value());
  return copy;
}

/// n synthetic triples from a seed-42 generator: a 4-token prompt, 3-token chosen and rejected
/// answers, ids in [1, 64). No meaning: the tests only need the policy to learn to prefer them.
std::vector<PreferenceExample> make_tiny_dataset(int n = 6) {
  std::vector<PreferenceExample> examples;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(42);
  for (int i = 0; i < n; ++i) {
    auto prompt = row(torch::randint(1, 64, {4}, generator, torch::kLong));
    auto chosen = row(torch::randint(1, 64, {3}, generator, torch::kLong));
    auto rejected = row(torch::randint(1, 64, {3}, generator, torch::kLong));
    examples.push_back({prompt, chosen, rejected});
  }
  return examples;
}

/// The options of most trainer tests: max_seq_len 10, pad 0, beta 0.1, batch 2.
DPOTrainerOptions tiny_options(std::int64_t max_steps, double max_lr, std::int64_t batch_size = 2,
                               double beta = 0.1) {
  return DPOTrainerOptions(/*max_seq_len=*/10, /*pad_id=*/0, beta, batch_size, max_steps, max_lr);
}

const void* identity(const torch::Tensor& t) {
  return t.unsafeGetTensorImpl();
}

}  // namespace

// --- PreferenceExample (provided) -------------------------------------------------------------

TEST_CASE("preference_example_is_named_tuple", "[clean]") {
  const PreferenceExample ex{{1, 2, 3}, {4, 5}, {6, 7, 8}};
  CHECK(ex.prompt_ids == Ids{1, 2, 3});
  CHECK(ex.chosen_ids == Ids{4, 5});
  CHECK(ex.rejected_ids == Ids{6, 7, 8});
}

TEST_CASE("preference_example_iterable_unpack", "[clean]") {
  const PreferenceExample ex{{1}, {2}, {3}};
  const auto& [prompt, chosen, rejected] = ex;
  CHECK(prompt == Ids{1});
  CHECK(chosen == Ids{2});
  CHECK(rejected == Ids{3});
}

// --- pad_and_collate_pref ----------------------------------------------------------------------

TEST_CASE("pad_and_collate_pref_returns_six_tensors") {
  const auto [cx, cy, cm, rx, ry, rm] = pad_and_collate_pref({{{1, 2}, {3, 4}, {5, 6, 7}}}, 6, 0);
  for (const auto& t : {cx, cy, cm, rx, ry, rm}) CHECK(t.defined());
}

TEST_CASE("pad_and_collate_pref_shapes") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{1, 2}, {3, 4}, {5, 6, 7}}, {{10, 11}, {12}, {13, 14}}}, 6, 0);
  INFO("all six are (B, max_seq_len - 1): the shift by one shortens the time axis by one");
  for (const auto& t : {cx, cy, cm, rx, ry, rm}) CHECK(t.sizes() == torch::IntArrayRef({2, 5}));
}

TEST_CASE("pad_and_collate_pref_dtypes") {
  const auto [cx, cy, cm, rx, ry, rm] = pad_and_collate_pref({{{1, 2}, {3, 4}, {5, 6}}}, 5, 0);
  INFO("ids are int64 (the embedding's indices)");
  CHECK(cx.scalar_type() == torch::kLong);
  CHECK(cy.scalar_type() == torch::kLong);
  CHECK(rx.scalar_type() == torch::kLong);
  CHECK(ry.scalar_type() == torch::kLong);
  // The masks may be int64 or float: sequence_logprob casts them.
  CHECK((cm.scalar_type() == torch::kLong || cm.scalar_type() == torch::kFloat));
  CHECK((rm.scalar_type() == torch::kLong || rm.scalar_type() == torch::kFloat));
}

TEST_CASE("pad_and_collate_pref_chosen_shifts_for_lm") {
  // prompt + chosen = [10, 11, 12, 20, 21]
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11, 12}, {20, 21}, {30, 31}}}, 5, 0);
  INFO("chosen_x = (prompt + chosen)[:-1], chosen_y = (prompt + chosen)[1:]");
  CHECK(row(cx[0]) == Ids{10, 11, 12, 20});
  CHECK(row(cy[0]) == Ids{11, 12, 20, 21});
}

TEST_CASE("pad_and_collate_pref_rejected_shifts_for_lm") {
  // prompt + rejected = [10, 11, 12, 30, 31]
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11, 12}, {20, 21}, {30, 31}}}, 5, 0);
  INFO("rejected_x = (prompt + rejected)[:-1], rejected_y = (prompt + rejected)[1:]");
  CHECK(row(rx[0]) == Ids{10, 11, 12, 30});
  CHECK(row(ry[0]) == Ids{11, 12, 30, 31});
}

TEST_CASE("pad_and_collate_pref_chosen_mask_only_on_response") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11, 12}, {20, 21}, {30, 31}}}, 5, 0);
  INFO(
      "the mask is 0 on the prompt and 1 on the answer ([0, 0, 0, 1, 1]), then shifted by one "
      "like y (mask[:, 1:]): 1 exactly where the target is an answer token");
  CHECK(row(cm[0]) == Ids{0, 0, 1, 1});
}

TEST_CASE("pad_and_collate_pref_rejected_mask_only_on_response") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11, 12}, {20, 21}, {30, 31}}}, 5, 0);
  INFO("the rejected mask is built like the chosen one: 0 on the prompt, 1 on the answer, shifted");
  CHECK(row(rm[0]) == Ids{0, 0, 1, 1});
}

TEST_CASE("pad_and_collate_pref_pads_short_examples") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11}, {20, 21}, {30, 31, 32}}}, 6, 99);
  INFO("pad ids with pad_id and masks with 0 up to max_seq_len, then shift");
  CHECK(row(cx[0]) == Ids{10, 11, 20, 21, 99});
  CHECK(row(cy[0]) == Ids{11, 20, 21, 99, 99});
  CHECK(row(cm[0]) == Ids{0, 1, 1, 0, 0});
}

TEST_CASE("pad_and_collate_pref_pad_positions_have_loss_mask_zero") {
  const auto [cx, cy, cm, rx, ry, rm] = pad_and_collate_pref({{{10, 11}, {20}, {30}}}, 6, 0);
  INFO(
      "a padded target must never count, on either side: otherwise an answer's score includes "
      "the pad id's log-probability");
  CHECK(row(cm[0]) == Ids{0, 1, 0, 0, 0});
  CHECK(row(rm[0]) == Ids{0, 1, 0, 0, 0});
}

TEST_CASE("pad_and_collate_pref_truncates_long_examples") {
  Ids prompt(10);
  std::iota(prompt.begin(), prompt.end(), 0);
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{prompt, {100, 101, 102}, {200, 201, 202}}}, 6, 0);
  INFO(
      "keep the first max_seq_len ids of prompt + answer and drop the tail; here the answer is "
      "cut off entirely, so no position counts");
  CHECK(row(cx[0]) == Ids{0, 1, 2, 3, 4});
  CHECK(row(cy[0]) == Ids{1, 2, 3, 4, 5});
  CHECK(row(cm[0]) == Ids{0, 0, 0, 0, 0});
}

TEST_CASE("pad_and_collate_pref_chosen_and_rejected_independent") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{10, 11}, {20}, {30, 31, 32}}}, 6, 0);
  INFO(
      "each side is truncated and padded on its own: a short chosen answer must not shorten or "
      "pad the rejected one");
  CHECK(row(rx[0]) == Ids{10, 11, 30, 31, 32});
  CHECK(row(ry[0]) == Ids{11, 30, 31, 32, 0});
  CHECK(row(rm[0]) == Ids{0, 1, 1, 1, 0});
}

TEST_CASE("pad_and_collate_pref_batch_pads_to_common_length") {
  const auto [cx, cy, cm, rx, ry, rm] =
      pad_and_collate_pref({{{1, 2}, {3}, {4}}, {{10, 11, 12}, {20, 21}, {30, 31}}}, 5, 0);
  CHECK(cx.sizes() == torch::IntArrayRef({2, 4}));
  CHECK(rx.sizes() == torch::IntArrayRef({2, 4}));
}

// --- sequence_logprob --------------------------------------------------------------------------

TEST_CASE("sequence_logprob_returns_per_example_shape") {
  const auto logits = torch::randn({3, 4, 7});
  const auto targets = torch::randint(0, 7, {3, 4}, torch::kLong);
  const auto out = sequence_logprob(logits, targets, torch::ones({3, 4}, torch::kLong));
  INFO("one sum per example, (B,): sum over T only, not over the batch");
  CHECK(out.sizes() == torch::IntArrayRef({3}));
}

TEST_CASE("sequence_logprob_uniform_logits_full_mask") {
  const std::int64_t B = 2, T = 5, V = 8;
  const auto targets = torch::randint(0, V, {B, T}, torch::kLong);
  const auto out =
      sequence_logprob(torch::zeros({B, T, V}), targets, torch::ones({B, T}, torch::kLong));
  INFO("uniform logits give log p = -ln V at every position; T of them sum to -T ln V: " << out);
  CHECK(g2c::testing::py_allclose(out, torch::full({B}, -static_cast<double>(T) * std::log(8.0)),
                                  1e-5));
}

TEST_CASE("sequence_logprob_zero_mask_returns_zero") {
  const auto logits = torch::randn({2, 4, 7});
  const auto targets = torch::randint(0, 7, {2, 4}, torch::kLong);
  const auto out = sequence_logprob(logits, targets, torch::zeros({2, 4}, torch::kLong));
  INFO("no counted position sums to 0");
  CHECK(g2c::testing::py_allclose(out, torch::zeros({2})));
}

TEST_CASE("sequence_logprob_ignores_masked_positions") {
  torch::manual_seed(7);
  auto logits = torch::randn({1, 4, 5});
  const auto targets = torch::randint(0, 5, {1, 4}, torch::kLong);
  const auto mask = torch::tensor({{0, 0, 1, 1}}, torch::kLong);
  const auto before = sequence_logprob(logits, targets, mask).clone();
  logits[0][0].fill_(1000.0);
  logits[0][1].fill_(-1000.0);
  const auto after = sequence_logprob(logits, targets, mask);
  INFO("positions with mask 0 must not change the sum (multiply by the mask before summing)");
  CHECK(g2c::testing::py_allclose(before, after, 1e-5));
}

TEST_CASE("sequence_logprob_accepts_float_mask") {
  torch::manual_seed(11);
  const auto logits = torch::randn({1, 4, 5});
  const auto targets = torch::randint(0, 5, {1, 4}, torch::kLong);
  const auto mask_int = torch::tensor({{0, 1, 1, 1}}, torch::kLong);
  const auto a = sequence_logprob(logits, targets, mask_int);
  const auto b = sequence_logprob(logits, targets, mask_int.to(torch::kFloat));
  INFO(
      "an int64 mask and the same mask as float give the same sum (cast it to the log-probs' "
      "dtype)");
  CHECK(g2c::testing::py_allclose(a, b, 1e-5));
}

TEST_CASE("sequence_logprob_against_manual") {
  // Each row's log-sum-exp is ln(e + e² + e³) ≈ 3.4076 and its target has logit 3.
  const auto logits = torch::tensor({{{1.0, 2.0, 3.0}, {3.0, 2.0, 1.0}}}, torch::kFloat);
  const auto targets = torch::tensor({{2, 0}}, torch::kLong);
  const auto out = sequence_logprob(logits, targets, torch::ones({1, 2}, torch::kLong));
  const double expected =
      -2.0 * (std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0);  // ≈ -0.8152
  INFO("log_softmax, pick each target, sum: got " << out << ", expected " << expected);
  CHECK(g2c::testing::py_allclose(out, torch::tensor({expected}), 1e-5));
}

// --- dpo_loss ----------------------------------------------------------------------------------

TEST_CASE("dpo_loss_returns_scalar_and_metrics") {
  const auto [loss, metrics] =
      dpo_loss(t1({-3, -4}), t1({-5, -6}), t1({-3, -4}), t1({-5, -6}), 0.1);
  INFO("the loss is the batch mean, a 0-dim tensor; each metric is a 0-dim batch mean");
  CHECK(loss.dim() == 0);
  for (const auto& m :
       {metrics.chosen_reward, metrics.rejected_reward, metrics.reward_margin, metrics.accuracy}) {
    REQUIRE(m.defined());
    CHECK(m.dim() == 0);
  }
}

TEST_CASE("dpo_loss_initial_state_is_log2") {
  const auto pc = t1({-3, -4, -5}), pr = t1({-7, -8, -9});
  const auto [loss, metrics] = dpo_loss(pc, pr, pc.clone(), pr.clone(), 0.1);
  INFO("policy = reference: every log-ratio difference is 0 and the loss is -log σ(0) = ln 2");
  CHECK(loss.item<double>() == within(kLn2, 1e-5));
}

TEST_CASE("dpo_loss_initial_state_log2_at_various_betas") {
  const auto pc = t1({-3}), pr = t1({-7});
  for (const double beta : {0.01, 0.1, 0.5, 1.0}) {
    const auto [loss, metrics] = dpo_loss(pc, pr, pc.clone(), pr.clone(), beta);
    INFO("beta = " << beta << ": expected ln 2 whatever beta is, got " << loss.item<double>());
    CHECK(loss.item<double>() == within(kLn2, 1e-5));
  }
}

TEST_CASE("dpo_loss_strict_preference_below_log2") {
  // The policy prefers chosen more than the reference does: (pc - pr) > (rc - rr).
  const auto [loss, metrics] = dpo_loss(t1({-2}), t1({-8}), t1({-3}), t1({-7}), 0.5);
  INFO(
      "a policy that prefers the chosen answer more than the reference does has loss < ln 2: "
      "the sigmoid's argument is β((π_c − π_r) − (ref_c − ref_r)), chosen minus rejected");
  CHECK(loss.item<double>() < kLn2);
}

TEST_CASE("dpo_loss_anti_preference_above_log2") {
  const auto [loss, metrics] = dpo_loss(t1({-8}), t1({-2}), t1({-3}), t1({-7}), 0.5);
  INFO("a policy that prefers the rejected answer more than the reference does has loss > ln 2");
  CHECK(loss.item<double>() > kLn2);
}

TEST_CASE("dpo_loss_accuracy_metric") {
  const auto [loss, metrics] = dpo_loss(t1({-2, -2, -2, -8}), t1({-8, -8, -8, -2}),
                                        t1({-3, -3, -3, -3}), t1({-7, -7, -7, -7}), 0.1);
  INFO("accuracy is the fraction of examples with chosen_reward > rejected_reward: 3 of 4");
  CHECK(metrics.accuracy.item<double>() == within(0.75, 1e-5));
}

TEST_CASE("dpo_loss_implicit_rewards") {
  const double beta = 0.5;
  const auto [loss, metrics] =
      dpo_loss(t1({-2, -3}), t1({-4, -5}), t1({-3, -4}), t1({-5, -6}), beta);
  const double expected_chosen = beta * ((-2.0 + 3.0) + (-3.0 + 4.0)) / 2.0;
  const double expected_rejected = beta * ((-4.0 + 5.0) + (-5.0 + 6.0)) / 2.0;
  INFO("chosen_reward = mean β · (policy_chosen − ref_chosen), rejected likewise: got "
       << metrics.chosen_reward.item<double>() << " and " << metrics.rejected_reward.item<double>()
       << ", expected " << expected_chosen << " and " << expected_rejected
       << " (a reward without β is off by a factor 1/β)");
  CHECK(metrics.chosen_reward.item<double>() == within(expected_chosen, 1e-5));
  CHECK(metrics.rejected_reward.item<double>() == within(expected_rejected, 1e-5));
  CHECK(metrics.reward_margin.item<double>() == within(expected_chosen - expected_rejected, 1e-5));
}

TEST_CASE("dpo_loss_beta_scales_logits") {
  // (pc - pr) - (rc - rr) = 4: the sigmoid's argument is 1 at beta 0.25 and 2 at beta 0.5.
  const auto pc = t1({-1}), pr = t1({-5}), rc = t1({-3}), rr = t1({-3});
  const auto [loss_25, m25] = dpo_loss(pc, pr, rc, rr, 0.25);
  const auto [loss_50, m50] = dpo_loss(pc, pr, rc, rr, 0.50);
  const double expected_25 = -std::log(1.0 / (1.0 + std::exp(-1.0)));  // ≈ 0.3133
  const double expected_50 = -std::log(1.0 / (1.0 + std::exp(-2.0)));  // ≈ 0.1269
  INFO("the loss is -log σ(β · 4): got " << loss_25.item<double>() << " at β = 0.25 and "
                                         << loss_50.item<double>() << " at β = 0.5");
  CHECK(loss_25.item<double>() == within(expected_25, 1e-5));
  CHECK(loss_50.item<double>() == within(expected_50, 1e-5));
}

TEST_CASE("dpo_loss_gradient_flows_to_policy_only") {
  const auto pc = t1({-2}).requires_grad_(), pr = t1({-5}).requires_grad_();
  const auto rc = t1({-3}), rr = t1({-7});  // the reference: no gradient
  const auto [loss, metrics] = dpo_loss(pc, pr, rc, rr, 0.5);
  loss.backward();
  REQUIRE(pc.grad().defined());
  REQUIRE(pr.grad().defined());
  CHECK(torch::isfinite(pc.grad()).all().item<bool>());
  CHECK(torch::isfinite(pr.grad()).all().item<bool>());
  INFO(
      "lowering the loss must raise the chosen log-prob (dL/dπ_c < 0) and lower the rejected "
      "one (dL/dπ_r > 0): got "
      << pc.grad().item<double>() << " and " << pr.grad().item<double>());
  CHECK(pc.grad().item<double>() < 0.0);
  CHECK(pr.grad().item<double>() > 0.0);
}

// Three near misses the Python tests above cannot tell from the lesson's formula.
TEST_CASE("dpo_loss_accuracy_counts_strict_wins_only") {
  // policy = reference (step 0): every reward is 0, no answer is preferred yet.
  const auto pc = t1({-3, -4, -5}), pr = t1({-7, -8, -9});
  const auto [loss, metrics] = dpo_loss(pc, pr, pc.clone(), pr.clone(), 0.1);
  INFO(
      "policy = reference gives chosen_reward = rejected_reward = 0 for every example, and a tie "
      "is not a win: accuracy must be 0, got "
      << metrics.accuracy.item<double>()
      << " (count chosen_reward > rejected_reward, strictly; >= counts ties)");
  CHECK(metrics.accuracy.item<double>() == 0.0);
}

TEST_CASE("dpo_loss_metrics_are_detached") {
  const auto pc = t1({-2, -3}).requires_grad_(), pr = t1({-5, -6}).requires_grad_();
  const auto [loss, metrics] = dpo_loss(pc, pr, t1({-3, -4}), t1({-7, -8}), 0.5);
  CHECK(loss.requires_grad());
  const std::vector<std::pair<const char*, torch::Tensor>> named = {
      {"chosen_reward", metrics.chosen_reward},
      {"rejected_reward", metrics.rejected_reward},
      {"reward_margin", metrics.reward_margin},
      {"accuracy", metrics.accuracy}};
  for (const auto& [name, metric] : named) {
    INFO(name << " still requires grad: call .detach() on each metric (they are for logging, and "
                 "a metric on the graph keeps every activation of the step alive)");
    CHECK_FALSE(metric.requires_grad());
  }
}

TEST_CASE("dpo_loss_is_finite_at_large_margins") {
  // β((π_c − π_r) − (ref_c − ref_r)) = −1000: the policy badly prefers the rejected answer.
  const auto pc = t1({-1000}).requires_grad_();
  const auto [loss, metrics] = dpo_loss(pc, t1({0}), t1({0}), t1({0}), 1.0);
  INFO("at a margin of -1000 the loss is -log σ(-1000) = 1000, got "
       << loss.item<double>()
       << ": compute it as -log_sigmoid(margin); log(sigmoid(margin)) underflows to log(0) = -inf");
  CHECK(std::isfinite(loss.item<double>()));
  CHECK(loss.item<double>() == within(1000.0, 1e-3));
  loss.backward();
  CHECK(pc.grad().item<double>() == within(-1.0, 1e-6));
}

// --- DPOTrainer: construction and lr (provided) -----------------------------------------------

TEST_CASE("dpo_trainer_construction_defaults", "[clean]") {
  auto model = make_tiny_model();
  DPOTrainer trainer(model, clone_model(model), make_tiny_dataset(), tiny_options(10, 1e-4));
  CHECK(trainer.beta() == 0.1);
  CHECK(trainer.max_steps() == 10);
  CHECK(trainer.batch_size() == 2);
  CHECK(trainer.step() == 0);
  CHECK(dynamic_cast<g2c::nn::AdamW*>(trainer.trainer.optimizer.get()) != nullptr);
  CHECK(trainer.device() == g2c::nn::resolve_device("auto"));
}

TEST_CASE("dpo_trainer_explicit_cpu_device_moves_model_params", "[clean]") {
  auto model = make_tiny_model();
  auto ref = clone_model(model);
  DPOTrainer trainer(
      model, ref, make_tiny_dataset(),
      with_recipe(tiny_options(10, 1e-4), [&](auto& recipe) { recipe.device("cpu"); }));
  CHECK(trainer.device() == torch::Device(torch::kCPU));
  for (const auto& p : model->parameters()) CHECK(p.device().is_cpu());
  for (const auto& p : ref->parameters()) CHECK(p.device().is_cpu());
}

TEST_CASE("dpo_trainer_optimizer_only_on_policy", "[clean]") {
  auto model = make_tiny_model();
  auto ref = clone_model(model);
  DPOTrainer trainer(model, ref, make_tiny_dataset(), tiny_options(10, 1e-4));
  std::vector<const void*> policy, reference, optimized;
  for (const auto& p : model->parameters()) policy.push_back(identity(p));
  for (const auto& p : ref->parameters()) reference.push_back(identity(p));
  for (const auto& p : trainer.trainer.optimizer->params()) optimized.push_back(identity(p));
  for (auto* list : {&policy, &reference, &optimized}) std::sort(list->begin(), list->end());
  INFO("the optimizer holds exactly the policy's parameters, none of the reference's");
  CHECK(optimized == policy);
  std::vector<const void*> shared;
  std::set_intersection(optimized.begin(), optimized.end(), reference.begin(), reference.end(),
                        std::back_inserter(shared));
  CHECK(shared.empty());
}

TEST_CASE("dpo_trainer_empty_examples_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(DPOTrainer(model, clone_model(model), {}, tiny_options(10, 1e-4)),
                  g2c::ValueError);
}

TEST_CASE("dpo_trainer_bad_batch_size_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(DPOTrainer(model, clone_model(model), make_tiny_dataset(),
                             tiny_options(10, 1e-4, /*batch_size=*/0)),
                  g2c::ValueError);
}

TEST_CASE("dpo_trainer_max_seq_len_too_small_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(DPOTrainer(model, clone_model(model), make_tiny_dataset(),
                             DPOTrainerOptions(/*max_seq_len=*/1, /*pad_id=*/0, /*beta=*/0.1,
                                               /*batch_size=*/2, /*max_steps=*/10,
                                               /*max_lr=*/1e-4)),
                  g2c::ValueError);
}

TEST_CASE("dpo_trainer_bad_beta_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(DPOTrainer(model, clone_model(model), make_tiny_dataset(),
                             tiny_options(10, 1e-4, /*batch_size=*/2, /*beta=*/0.0)),
                  g2c::ValueError);
}

TEST_CASE("dpo_trainer_lr_uses_cosine_schedule") {
  auto model = make_tiny_model();
  DPOTrainer trainer(
      model, clone_model(model), make_tiny_dataset(),
      with_recipe(tiny_options(100, 1e-4), [&](auto& recipe) { recipe.warmup_steps(10); }));
  INFO("DPOTrainer::lr is module 10's schedule: it needs your cosine_with_warmup (module 03b)");
  CHECK(trainer.lr(0) == py_approx(cosine_with_warmup(0, 10, 100, 1e-4, 0.0)));
  CHECK(trainer.lr(50) == py_approx(cosine_with_warmup(50, 10, 100, 1e-4, 0.0)));
}

// --- DPOTrainer::train_step --------------------------------------------------------------------

TEST_CASE("dpo_trainer_train_step_returns_metrics") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  DPOTrainer trainer(
      model, clone_model(model), make_tiny_dataset(),
      with_recipe(tiny_options(10, 1e-3), [&](auto& recipe) { recipe.grad_clip(1.0); }));
  const auto m = trainer.train_step();
  INFO("loss " << m.loss << ", lr " << m.lr << ", grad_norm " << m.grad_norm << ", chosen_reward "
               << m.chosen_reward << ", rejected_reward " << m.rejected_reward << ", reward_margin "
               << m.reward_margin << ", accuracy " << m.accuracy);
  for (const double value : {m.loss, m.lr, m.grad_norm, m.chosen_reward, m.rejected_reward,
                             m.reward_margin, m.accuracy}) {
    CHECK(std::isfinite(value));
  }
  INFO("train_step ends with trainer.step += 1");
  CHECK(trainer.step() == 1);
}

TEST_CASE("dpo_trainer_initial_loss_is_log2") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  DPOTrainer trainer(model, clone_model(model), make_tiny_dataset(),
                     tiny_options(10, /*max_lr=*/0.0, /*batch_size=*/4));
  const auto m = trainer.train_step();
  INFO(
      "policy = reference before the first update, so the step-0 loss is ln 2 = 0.6931 whatever "
      "the data: got "
      << m.loss
      << ". If not: the reference and policy see different batches, a mask is wrong, or the "
         "loss is not -log σ of β times the log-ratio difference");
  CHECK(m.loss == within(kLn2, 1e-4));
}

TEST_CASE("dpo_trainer_loss_decreases") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  DPOTrainer trainer(model, clone_model(model), make_tiny_dataset(4),
                     with_recipe(tiny_options(30, 1e-2),
                                 [&](auto& recipe) { recipe.warmup_steps(2).grad_clip(1.0); }));
  const auto history = trainer.train();
  const auto& losses = history.train_loss;
  REQUIRE(losses.size() >= 2);
  const double initial = losses.front(), final = losses.back();
  INFO("30 DPO steps should lower the loss by at least 5%: initial "
       << initial << ", final " << final << ". If not, the smaller tests say which piece is wrong");
  CHECK(final < initial * 0.95);
}

TEST_CASE("dpo_trainer_ref_model_unchanged") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  auto ref = clone_model(model);
  std::vector<torch::Tensor> before;
  for (const auto& p : ref->parameters()) before.push_back(p.detach().clone());
  DPOTrainer trainer(
      model, ref, make_tiny_dataset(),
      with_recipe(tiny_options(20, 1e-2), [&](auto& recipe) { recipe.grad_clip(1.0); }));
  trainer.train();
  const auto after = ref->parameters();
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    INFO("reference parameter " << i
                                << " changed during training: only the policy is optimized, "
                                   "the reference is the fixed point the rewards measure from");
    CHECK(torch::equal(before[i], after[i].detach().cpu()));
  }
}

TEST_CASE("dpo_trainer_evaluate_returns_metrics_dict") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  DPOTrainer trainer(
      model, clone_model(model), make_tiny_dataset(),
      with_recipe(tiny_options(10, 1e-4), [&](auto& recipe) { recipe.eval_iters(3); }));
  const auto val = trainer.evaluate(make_tiny_dataset());
  INFO(
      "evaluate averages dpo_loss over eval_iters batches: it needs your sequence_logprob and "
      "dpo_loss");
  for (const double value :
       {val.loss, val.chosen_reward, val.rejected_reward, val.reward_margin, val.accuracy}) {
    CHECK(std::isfinite(value));
  }
}

TEST_CASE("dpo_trainer_evaluate_empty_raises", "[clean]") {
  auto model = make_tiny_model();
  DPOTrainer trainer(model, clone_model(model), make_tiny_dataset(), tiny_options(10, 1e-4));
  CHECK_THROWS_AS(trainer.evaluate({}), g2c::ValueError);
}

// --- Additions of this edition ------------------------------------------------------------------

TEST_CASE("dpo_trainer_steps_follow_the_recipe") {
  // Two steps of the student's train_step against the recipe written out here, from the same
  // weights on the same batches: the same parameters after each step. With warmup the second
  // step's rate differs from the first, so a counter moved before the lr is read shows; the
  // second step's gradients are fresh only if the first step's were zeroed.
  const auto examples = make_tiny_dataset();
  const auto options = with_recipe(tiny_options(10, 1e-2), [&](auto& recipe) {
    recipe.warmup_steps(3).grad_clip(0.05).device("cpu");
  });
  torch::manual_seed(3);
  auto model = make_tiny_model();
  auto twin = clone_model(model);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  auto twin_generator = at::make_generator<at::CPUGeneratorImpl>(5);
  DPOTrainer trainer(model, clone_model(model), examples,
                     with_recipe(options, [&](auto& recipe) { recipe.generator(generator); }));
  DPOTrainer recipe(twin, clone_model(model), examples,
                    with_recipe(options, [&](auto& recipe) { recipe.generator(twin_generator); }));
  for (int step = 0; step < 2; ++step) {
    const auto metrics = trainer.train_step();
    // The recipe: batch, this step's lr, zero_grad, four log-probs, loss, backward, clip, update.
    const auto [cx, cy, cm, rx, ry, rm] = recipe.sample_batch(recipe.examples);
    const double lr = recipe.lr(step);
    recipe.trainer.optimizer->lr = lr;
    recipe.trainer.optimizer->zero_grad();
    const auto pc = sequence_logprob(twin->forward(cx), cy, cm);
    const auto pr = sequence_logprob(twin->forward(rx), ry, rm);
    torch::Tensor rc, rr;
    {
      torch::NoGradGuard no_grad;
      rc = sequence_logprob(recipe.ref_model().forward(cx), cy, cm);
      rr = sequence_logprob(recipe.ref_model().forward(rx), ry, rm);
    }
    const auto [loss, m] = dpo_loss(pc, pr, rc, rr, 0.1);
    loss.backward();
    const double norm = g2c::training::clip_grad_norm_(twin->parameters(), 0.05);
    recipe.trainer.optimizer->step();
    recipe.trainer.step += 1;
    {
      INFO("step " << step << ": loss " << metrics.loss << " vs " << loss.item<double>()
                   << ", reward_margin " << metrics.reward_margin << " vs "
                   << m.reward_margin.item<double>()
                   << ": dpo_loss of this step's batch, before the update");
      CHECK(metrics.loss == Approx(loss.item<double>()).epsilon(1e-6));
      CHECK(metrics.reward_margin == within(m.reward_margin.item<double>(), 1e-6));
      CHECK(metrics.accuracy == within(m.accuracy.item<double>(), 1e-6));
    }
    g2c::testing::check_step_follows_recipe(step, metrics.lr, lr, metrics.grad_norm, norm,
                                            model->parameters(), twin->parameters());
  }
  CHECK(trainer.step() == 2);
}

TEST_CASE("dpo_trainer_reference_forward_without_autograd") {
  // The trainer freezes the reference, which makes a reference forward outside NoGradGuard build
  // no graph anyway. With the freeze lifted, only the guard keeps gradients off the reference.
  torch::manual_seed(0);
  auto model = make_tiny_model();
  auto ref = clone_model(model);
  DPOTrainer trainer(model, ref, make_tiny_dataset(), tiny_options(10, 1e-3));
  for (auto& p : ref->parameters()) p.requires_grad_(true);
  trainer.train_step();
  std::size_t with_gradient = 0;
  for (const auto& p : ref->parameters()) with_gradient += p.grad().defined() ? 1 : 0;
  INFO("a gradient reached " << with_gradient
                             << " reference parameters: compute the reference's log-probs "
                                "inside a torch::NoGradGuard scope");
  CHECK(with_gradient == 0);
}
