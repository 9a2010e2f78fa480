// Beyond module rl framework checks: the verifiers on the edges the lesson's examples do not reach
// (signs, huge integers, nested and non-object JSON); the task builders' ranges and options and
// their determinism under a seed; sample_group's group against module 11's generate with the same
// generator; group_advantages against a float64 hand computation; completion_log_prob against
// module 11's sequence_log_prob row by row on a real TransformerLM, batched, with its gradient
// reaching the model; grpo_loss's gradient against the closed form; the trainer's checks, its
// loop's history and its greedy evaluation against generate and the verifier by hand; the
// policies: generate_cached through a scoring model against module 11's generate, SmolLM2's
// architecture with LoRA scoring and decoding as the adapted model (and its reference as a separate
// copy of the base) by a hand loop, and a GRPO step on it moving the adapters and nothing else.
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
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/lora.h"
#include "g2c/rl/grpo.h"
#include "g2c/rl/policy.h"
#include "g2c/rl/sample.h"
#include "g2c/rl/trainer.h"
#include "g2c/rl/verifiers.h"
#include "g2c/sampling/best_of_n.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "one_thread.h"
#include "tiny_llama.h"
#include "torch_test.h"

using g2c::rl::GRPOOptions;
using g2c::rl::GRPOTrainer;
using g2c::rl::Task;
using g2c::transformer::TransformerLM;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// One id per character of "0123456789+= {}\":a" (V 18): arithmetic and the format task's JSON.
g2c::testing::CharacterCodec Chars() {
  return g2c::testing::CharacterCodec("0123456789+= {}\":a");
}

TransformerLM tiny_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  return TransformerLM(/*vocab_size=*/18, /*embedding_dim=*/16, /*num_layers=*/1, /*num_heads=*/2,
                       /*max_seq_len=*/48);
}

Task addition(std::string prompt, std::int64_t answer) {
  return {std::move(prompt), answer, {}, ""};
}

}  // namespace

// --- Verifiers and tasks ------------------------------------------------------------------------

TEST_CASE("integers_are_found_as_pythons_findall_finds_them", "[rl]") {
  using g2c::rl::integers_in;
  std::vector<std::int64_t> found;
  for (const auto& value : integers_in("5-3, x-7 y - 2 007 -0")) found.push_back(value.value());
  CHECK(found == std::vector<std::int64_t>{5, -3, -7, 2, 7, 0});
  const auto huge = integers_in("81 99999999999999999999999");
  REQUIRE(huge.size() == 2);
  CHECK_FALSE(huge[1].has_value());
  // The last integer is the huge one: it is not 81, and the earlier 81 does not count.
  CHECK(g2c::rl::verify_arithmetic(addition("", 81), "81 99999999999999999999999") == 0.0);
  CHECK(g2c::rl::verify_arithmetic_sloppy(addition("", 81), "81 99999999999999999999999") == 1.0);
  CHECK(g2c::rl::verify_arithmetic(addition("", -4), "it is -4") == 1.0);
}

TEST_CASE("verify_format_reads_the_first_object_only", "[rl]") {
  using g2c::rl::verify_format;
  const auto plain = addition("", 0);
  CHECK(verify_format(plain, R"({"answer": null})") == 1.0);      // the value is not checked
  CHECK(verify_format(plain, R"({"Answer": 1})") == 0.0);         // the key is
  CHECK(verify_format(plain, R"([{"answer": 1}])") == 1.0);       // from the first '{'
  CHECK(verify_format(plain, R"({"answer": {"x": 1}})") == 0.0);  // to the FIRST '}'
  CHECK(verify_format(plain, R"({"answer": 1)") == 0.0);
  CHECK(verify_format(plain, "}{") == 0.0);
  auto primed = plain;
  primed.completion_prefix = R"({"answer":)";
  CHECK(verify_format(primed, " 12 }") == 1.0);
  CHECK(verify_format(primed, "") == 0.0);
}

TEST_CASE("task_builders_draw_in_range_and_repeat_under_a_seed", "[rl]") {
  std::mt19937_64 rng(3), again(3);
  std::set<std::int64_t> offsets;
  std::set<bool> answer_first;
  for (int i = 0; i < 200; ++i) {
    const auto task = g2c::rl::arithmetic_task(rng, 3);
    const auto twin = g2c::rl::arithmetic_task(again, 3);
    CHECK(task.prompt == twin.prompt);
    const auto plus = task.prompt.find('+');
    const auto a = std::stoll(task.prompt.substr(0, plus));
    const auto b = std::stoll(task.prompt.substr(plus + 1));
    CHECK((a >= 100 && a <= 999 && b >= 100 && b <= 999));
    CHECK(task.answer == a + b);
    CHECK(task.prompt == std::to_string(a) + "+" + std::to_string(b) + "=");

    const auto choice = g2c::rl::arithmetic_choice_task(rng);
    g2c::rl::arithmetic_choice_task(again);
    const bool first = choice.choices[0] == choice.answer;
    answer_first.insert(first);
    offsets.insert(choice.choices[first ? 1 : 0] - choice.answer);
  }
  CHECK(offsets == std::set<std::int64_t>{-9, -7, -3, -1, 1, 3, 7, 9});
  CHECK(answer_first.size() == 2);  // both orders occur
  CHECK_THROWS_AS(g2c::rl::arithmetic_task(rng, 0), g2c::ValueError);
  CHECK_THROWS_AS(g2c::rl::arithmetic_task(rng, 19), g2c::ValueError);
}

// --- sample_group -------------------------------------------------------------------------------

TEST_CASE("sample_group_is_k_calls_of_generate_with_one_generator", "[rl]") {
  auto model = tiny_model(1);
  const auto tokenizer = Chars();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto group =
      g2c::rl::sample_group(model, tokenizer, "12+34=", 3,
                            g2c::rl::SampleGroupOptions().max_new_tokens(5).generator(generator));
  REQUIRE(group.completions.size() == 3);
  REQUIRE(group.texts.size() == 3);
  CHECK(group.prompt_text == "12+34=");
  const auto prompt = torch::tensor(tokenizer.encode("12+34="), torch::kLong);
  CHECK(torch::equal(group.prompt_ids, prompt));
  auto replay = at::make_generator<at::CPUGeneratorImpl>(7);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto full = g2c::sampling::generate(model, prompt, 5,
                                              g2c::sampling::GenerateOptions().generator(replay));
    CHECK(torch::equal(group.completions[i], full.narrow(0, 6, full.numel() - 6)));
    const auto& c = group.completions[i];
    CHECK(group.texts[i] ==
          tokenizer.decode({c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()}));
  }
}

TEST_CASE("sample_group_refuses_an_empty_model_after_its_own_checks", "[rl]") {
  TransformerLM none{nullptr};
  const auto tokenizer = Chars();
  CHECK_THROWS_MATCHES(g2c::rl::sample_group(none, tokenizer, "1", 2), g2c::ValueError,
                       MessageContains("empty"));
  CHECK_THROWS_MATCHES(g2c::rl::sample_group(none, tokenizer, "1", 1), g2c::ValueError,
                       MessageContains("k >= 2"));
}

// --- The student's three functions against independent computations ----------------------------

TEST_CASE("group_advantages_matches_a_float64_hand_computation", "[rl]") {
  torch::manual_seed(4);
  for (const std::int64_t K : {2, 3, 8, 33}) {
    const auto rewards = torch::rand({K}, torch::kDouble);
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < K; ++i) mean += rewards[i].item<double>() / K;
    for (std::int64_t i = 0; i < K; ++i) var += std::pow(rewards[i].item<double>() - mean, 2) / K;
    const auto expected = (rewards - mean) / std::sqrt(var);
    CHECK(g2c::testing::close(g2c::rl::group_advantages(rewards), expected, 1e-12));
  }
  // Just below the threshold the group counts as degenerate; a real spread does not.
  CHECK((g2c::rl::group_advantages(torch::tensor({1.0, 1.0 + 1e-9}, torch::kDouble)) == 0)
            .all()
            .item<bool>());
  CHECK((g2c::rl::group_advantages(torch::tensor({1.0, 1.0 + 1e-6}, torch::kDouble)) != 0)
            .all()
            .item<bool>());
}

TEST_CASE("completion_log_prob_matches_module_11_row_by_row", "[rl]") {
  auto model = tiny_model(2);
  torch::manual_seed(5);
  const auto ids = torch::randint(0, 18, {3, 11}, torch::kLong);
  const auto batched = g2c::rl::completion_log_prob(model, ids, /*prompt_len=*/4);  // (3)
  REQUIRE(batched.sizes() == torch::IntArrayRef({3}));
  for (std::int64_t b = 0; b < 3; ++b) {
    const double expected = g2c::sampling::sequence_log_prob(model, ids[b], 4);
    CHECK(batched[b].item<double>() == Approx(expected).epsilon(1e-5));
  }
  // With autograd on, the sum's gradient reaches the model.
  batched.sum().backward();
  bool reached = false;
  for (const auto& p : model->parameters()) reached = reached || p.grad().defined();
  CHECK(reached);
  CHECK_THROWS_AS(g2c::rl::completion_log_prob(model, ids[0], 4), g2c::ValueError);  // 1-D
}

TEST_CASE("grpo_loss_gradient_is_the_closed_form", "[rl]") {
  // d loss / d logp_i = (−A_i + β (1 − e^{d_i})) / K, d = ref − logp, in float64.
  const auto logp = torch::tensor({-1.0, -2.5, -0.3, -4.0}, torch::kDouble).requires_grad_(true);
  const auto ref = torch::tensor({-1.2, -2.0, -0.3, -5.0}, torch::kDouble);
  const auto adv = torch::tensor({1.0, -0.5, 0.0, 2.0}, torch::kDouble);
  const double beta = 0.7;
  g2c::rl::grpo_loss(logp, ref, adv, beta).backward();
  const auto d = ref - logp.detach();
  const auto expected = (-adv + beta * (1.0 - d.exp())) / 4.0;
  CHECK(g2c::testing::close(logp.grad(), expected, 1e-12));
  CHECK_THROWS_AS(g2c::rl::grpo_loss(logp, ref.unsqueeze(1), adv, beta), g2c::ValueError);
}

// --- GRPOTrainer --------------------------------------------------------------------------------

TEST_CASE("trainer_checks_its_arguments", "[rl]") {
  const auto tokenizer = std::make_shared<g2c::testing::CharacterCodec>(Chars());
  const std::vector<Task> tasks = {addition("1+2=", 3)};
  auto model = tiny_model(3);
  CHECK_THROWS_MATCHES(GRPOTrainer(model, tiny_model(3), tokenizer, tasks,
                                   g2c::rl::verify_arithmetic, GRPOOptions().group_size(1)),
                       g2c::ValueError, MessageContains("group_size"));
  CHECK_THROWS_MATCHES(GRPOTrainer(model, model, tokenizer, tasks, g2c::rl::verify_arithmetic),
                       g2c::ValueError, MessageContains("ref_model is the policy itself"));
  CHECK_THROWS_AS(GRPOTrainer(model, tiny_model(3), nullptr, tasks, g2c::rl::verify_arithmetic),
                  g2c::ValueError);
  CHECK_THROWS_AS(GRPOTrainer(model, tiny_model(3), tokenizer, tasks, nullptr), g2c::ValueError);
  // The optimizer holds the policy's trainable parameters, the very tensors.
  GRPOTrainer trainer(model, tiny_model(3), tokenizer, tasks, g2c::rl::verify_arithmetic);
  const auto params = model->parameters();
  REQUIRE(trainer.optimizer->params().size() == params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    CHECK(trainer.optimizer->params()[i].is_same(params[i]));
  }
}

TEST_CASE("trainer_draws_tasks_uniformly_and_repeatably", "[rl]") {
  const std::vector<Task> tasks = {addition("1+1=", 2), addition("2+2=", 4), addition("3+3=", 6)};
  const auto tokenizer = std::make_shared<g2c::testing::CharacterCodec>(Chars());
  GRPOTrainer a(tiny_model(4), tiny_model(4), tokenizer, tasks, g2c::rl::verify_arithmetic,
                GRPOOptions().seed(11));
  GRPOTrainer b(tiny_model(4), tiny_model(4), tokenizer, tasks, g2c::rl::verify_arithmetic,
                GRPOOptions().seed(11));
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 3000; ++i) {
    const auto& task = a.next_task();
    CHECK(task.prompt == b.next_task().prompt);
    counts[static_cast<std::size_t>(task.answer / 2 - 1)] += 1;
  }
  for (const int count : counts) CHECK((count > 900 && count < 1100));
}

TEST_CASE("trainer_loop_records_every_attempt_and_counts_updates", "[rl]") {
  int calls = 0;
  // Groups of 2: even calls score 1, odd 0 for the first two steps' groups, then all 0.
  const g2c::rl::Verifier verifier = [&calls](const Task&, std::string_view) {
    const int call = calls++;
    return call < 4 && call % 2 == 0 ? 1.0 : 0.0;
  };
  GRPOTrainer trainer(
      tiny_model(5), tiny_model(5), std::make_shared<g2c::testing::CharacterCodec>(Chars()),
      {addition("12+34=", 46)}, verifier, GRPOOptions().group_size(2).max_new_tokens(3).lr(1e-3));
  const auto history = trainer.train(/*max_steps=*/4, /*log_every=*/0);
  REQUIRE(history.size() == 4);
  CHECK(history.skipped == std::vector<double>{0.0, 0.0, 1.0, 1.0});
  CHECK(history.mean_reward == std::vector<double>{0.5, 0.5, 0.0, 0.0});
  CHECK(trainer.step_count == 2);
  CHECK(std::isnan(history.kl[2]));
  const auto json = history.to_json();
  CHECK(json.at("kl").at(2).is_null());
  CHECK(json.at("skipped").size() == 4);
  CHECK_THROWS_AS(trainer.train(-1), g2c::ValueError);
}

TEST_CASE("trainer_evaluate_is_greedy_generate_scored_by_hand", "[rl]") {
  auto model = tiny_model(6);
  const auto tokenizer = std::make_shared<g2c::testing::CharacterCodec>(Chars());
  const std::vector<Task> pool = {addition("12+34=", 46), addition("5+5=", 10),
                                  addition("7+1=", 8)};
  // A verifier that accepts exactly the texts greedy decoding writes for the first two tasks.
  std::vector<std::string> greedy;
  for (const auto& task : pool) {
    const auto prompt = torch::tensor(tokenizer->encode(task.prompt), torch::kLong);
    const auto full =
        g2c::sampling::generate(model, prompt, 4, g2c::sampling::GenerateOptions().temperature(0));
    const auto* first = full.data_ptr<std::int64_t>();
    greedy.push_back(tokenizer->decode({first + prompt.numel(), first + full.numel()}));
  }
  const g2c::rl::Verifier scorer = [&](const Task& task, std::string_view text) {
    return task.answer != 8 && text == greedy[task.answer == 46 ? 0 : 1] ? 1.0 : 0.0;
  };
  GRPOTrainer trainer(model, tiny_model(6), tokenizer, pool, scorer,
                      GRPOOptions().max_new_tokens(4));
  CHECK(trainer.evaluate() == Approx(2.0 / 3.0));
  CHECK(trainer.evaluate({pool[0]}) == 1.0);
  CHECK(trainer.evaluate(pool, [](const Task&, std::string_view) { return 1.0; }) == 1.0);
  CHECK_THROWS_AS(trainer.evaluate({}), g2c::ValueError);
}

// --- Policies: module 09's model, and SmolLM2's architecture with LoRA adapters ----------------

namespace {

using g2c::pretrained::LlamaLoRA;
using g2c::pretrained::LlamaLoRAOptions;
using g2c::pretrained::LlamaModel;

/// A tiny Llama with LoRA adapters on q and v whose B are random (so the adapters matter), and a
/// separate copy of its base.
std::pair<LlamaLoRA, LlamaModel> adapted_tiny_llama(std::uint64_t seed) {
  torch::manual_seed(seed);
  LlamaModel model(g2c::testing::tiny_llama_options());
  torch::manual_seed(seed);
  LlamaModel copy(g2c::testing::tiny_llama_options());
  LlamaLoRA lora(model, LlamaLoRAOptions(2));
  torch::NoGradGuard no_grad;
  for (auto& item : lora->named_parameters()) {
    if (item.key().find("lora_B") != std::string::npos) item.value().normal_(0.0, 0.5);
  }
  return {lora, copy};
}

/// Greedy decoding by hand: the whole sequence through `forward` for every new id.
template <typename Forward>
std::vector<std::int64_t> greedy_by_hand(Forward&& forward, std::vector<std::int64_t> ids,
                                         int new_tokens) {
  torch::NoGradGuard no_grad;
  for (int step = 0; step < new_tokens; ++step) {
    const auto logits = forward(torch::tensor(ids, torch::kLong).unsqueeze(0));  // (1, T, V)
    ids.push_back(logits[0][-1].argmax().template item<std::int64_t>());
  }
  return ids;
}

std::vector<std::int64_t> as_vector(const torch::Tensor& ids) {
  const auto* first = ids.data_ptr<std::int64_t>();
  return {first, first + ids.numel()};
}

}  // namespace

TEST_CASE("generate_cached_through_a_scoring_model_is_module_11s_generate", "[rl]") {
  auto model = tiny_model(7);
  g2c::sampling::TransformerLogitsModel scorer(*model);
  const auto prompt = torch::tensor({1, 2, 10, 3}, torch::kLong);
  const auto greedy = g2c::sampling::GenerateOptions().temperature(0);
  CHECK(torch::equal(g2c::sampling::generate_cached(scorer, prompt, 12, greedy),
                     g2c::sampling::generate(model, prompt, 12, greedy)));
  // Sampled: the same generator state draws the same ids.
  const auto sampled = [](std::uint64_t seed) {
    return g2c::sampling::GenerateOptions().generator(
        at::make_generator<at::CPUGeneratorImpl>(seed));
  };
  CHECK(torch::equal(g2c::sampling::generate_cached(scorer, prompt, 12, sampled(3)),
                     g2c::sampling::generate(model, prompt, 12, sampled(3))));
  // The end id is kept and ends the run.
  const auto first = g2c::sampling::generate(model, prompt, 1, greedy)[4].item<std::int64_t>();
  const auto stopped = g2c::sampling::generate_cached(
      scorer, prompt, 12, g2c::sampling::GenerateOptions().temperature(0).eos_id(first));
  CHECK(stopped.numel() == 5);
  CHECK_THROWS_MATCHES(g2c::sampling::generate_cached(scorer, prompt, 0, greedy), g2c::ValueError,
                       MessageContains("max_new_tokens > 0"));
  CHECK_THROWS_MATCHES(
      g2c::sampling::generate_cached(scorer, torch::zeros({48}, torch::kLong), 1, greedy),
      g2c::ValueError, MessageContains("free position"));
  CHECK_THROWS_MATCHES(g2c::sampling::generate_cached(scorer, torch::tensor({1, 99}), 1, greedy),
                       g2c::ValueError, MessageContains("outside the model vocab"));
}

TEST_CASE("llama_lora_policy_scores_with_the_adapters_on_and_its_reference_with_them_off", "[rl]") {
  auto [lora, copy] = adapted_tiny_llama(31);
  const auto policy = g2c::rl::llama_lora_policy(lora, true);
  const auto reference = g2c::rl::llama_lora_policy(lora, false);
  const auto ids = torch::randint(0, 20, {1, 9}, torch::kLong);
  {
    torch::NoGradGuard no_grad;
    CHECK(g2c::testing::max_abs_diff(policy->scorer().forward(ids), lora->forward(ids)) == 0.0);
    CHECK(g2c::testing::max_abs_diff(reference->scorer().forward(ids), copy->forward(ids)) == 0.0);
    CHECK(g2c::testing::max_abs_diff(policy->scorer().forward(ids), copy->forward(ids)) > 1e-3);
  }
  CHECK(lora->enabled());  // the reference's call put the switch back
  const auto trainable = policy->trainable_parameters();
  REQUIRE(trainable.size() == lora->parameters().size());
  for (std::size_t i = 0; i < trainable.size(); ++i) {
    CHECK(trainable[i].is_same(lora->parameters()[i]));
  }
  CHECK(reference->trainable_parameters().empty());
  CHECK_FALSE(policy->same_as(*reference));
  CHECK(policy->same_as(*g2c::rl::llama_lora_policy(lora, true)));
  CHECK_FALSE(policy->same_as(*g2c::rl::transformer_policy(tiny_model(1))));
  CHECK(g2c::rl::llama_lora_policy(LlamaLoRA(nullptr), true) == nullptr);
  CHECK(g2c::rl::transformer_policy(TransformerLM(nullptr)) == nullptr);
}

TEST_CASE("llama_lora_policy_rollouts_decode_the_adapted_model", "[rl]") {
  auto [lora, copy] = adapted_tiny_llama(32);
  const auto policy = g2c::rl::llama_lora_policy(lora, true);
  const auto reference = g2c::rl::llama_lora_policy(lora, false);
  const std::vector<std::int64_t> prompt = {3, 1, 4, 1, 5};
  const auto prompt_ids = torch::tensor(prompt, torch::kLong);
  const auto greedy = g2c::sampling::GenerateOptions().temperature(0);
  // Through the cache with the weights merged once, against the whole sequence every step.
  CHECK(as_vector(policy->generate(prompt_ids, 10, greedy)) ==
        greedy_by_hand([&](const torch::Tensor& ids) { return lora->forward(ids); }, prompt, 10));
  CHECK(as_vector(reference->generate(prompt_ids, 10, greedy)) ==
        greedy_by_hand([&](const torch::Tensor& ids) { return copy->forward(ids); }, prompt, 10));
  CHECK(lora->enabled());
  // The model is the base model again after a rollout.
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(0, 20, {1, 7}, torch::kLong);
  CHECK(g2c::testing::max_abs_diff(lora->model->forward(ids), copy->forward(ids)) == 0.0);
  const auto sampled = [](std::uint64_t seed) {
    return g2c::sampling::GenerateOptions().generator(
        at::make_generator<at::CPUGeneratorImpl>(seed));
  };
  CHECK(torch::equal(policy->generate(prompt_ids, 10, sampled(5)),
                     policy->generate(prompt_ids, 10, sampled(5))));
}

TEST_CASE("grpo_trainer_on_a_llama_lora_policy_moves_the_adapters_only", "[rl]") {
  auto [lora, copy] = adapted_tiny_llama(33);
  const auto policy = g2c::rl::llama_lora_policy(lora, true);
  const auto reference = g2c::rl::llama_lora_policy(lora, false);
  const auto tokenizer = std::make_shared<g2c::testing::CharacterCodec>("0123456789+= abcdefg");
  // Mixed groups are likely: about one completion of four characters in five holds a 7.
  const g2c::rl::Verifier holds_a_seven = [](const Task&, std::string_view text) {
    return text.find('7') != std::string_view::npos ? 1.0 : 0.0;
  };
  std::vector<torch::Tensor> base_before, adapters_before;
  for (const auto& parameter : lora->model->parameters()) base_before.push_back(parameter.clone());
  for (const auto& parameter : lora->parameters()) adapters_before.push_back(parameter.clone());
  GRPOTrainer trainer(policy, reference, tokenizer, {addition("12+34=", 46)}, holds_a_seven,
                      GRPOOptions().group_size(8).max_new_tokens(4).lr(1e-2).seed(3));
  CHECK(trainer.optimizer->params().size() == lora->parameters().size());
  for (int step = 0; step < 20 && trainer.step_count == 0; ++step) trainer.train_step();
  REQUIRE(trainer.step_count == 1);
  const auto base_after = lora->model->parameters();
  for (std::size_t i = 0; i < base_after.size(); ++i) {
    CHECK(torch::equal(base_after[i], base_before[i]));
  }
  double moved = 0.0;
  const auto adapters_after = lora->parameters();
  for (std::size_t i = 0; i < adapters_after.size(); ++i) {
    moved += g2c::testing::max_abs_diff(adapters_after[i], adapters_before[i]);
  }
  CHECK(moved > 0.0);
  CHECK_THROWS_MATCHES(GRPOTrainer(policy, g2c::rl::llama_lora_policy(lora, true), tokenizer,
                                   {addition("12+34=", 46)}, holds_a_seven),
                       g2c::ValueError, MessageContains("ref_model is the policy itself"));
}
