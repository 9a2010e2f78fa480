// Module 14 framework tests: dpo_loss against a float64 computation written out here, and its
// gradient against finite differences; sequence_logprob against LibTorch's gather of log_softmax
// on random shapes and masks; pad_and_collate_pref against rows built independently; the reference
// model frozen, in eval mode and bit-identical after training; the DPO trainer through module 10's
// loop against a loop written out here, with the DPO series on exactly the logged steps; bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/dpo/dpo.h"
#include "g2c/nn/optim.h"
#include "g2c/training/clip.h"
#include "g2c/training/schedule.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "recipe_check.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::dpo::dpo_loss;
using g2c::dpo::DPOTrainer;
using g2c::dpo::DPOTrainerOptions;
using g2c::dpo::pad_and_collate_pref;
using g2c::dpo::PreferenceExample;
using g2c::dpo::sequence_logprob;
using g2c::testing::max_abs_diff;
using g2c::testing::with_recipe;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;
using Ids = std::vector<std::int64_t>;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

Ids to_ids(const torch::Tensor& t) {
  const auto flat = t.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

/// `count` random triples: prompts of 1..max_part ids, answers of 0..max_part, ids in [1, vocab).
std::vector<PreferenceExample> random_examples(int count, std::int64_t max_part, std::int64_t vocab,
                                               std::uint64_t seed) {
  auto generator = seeded(seed);
  const auto ids = [&](std::int64_t min_length) {
    const auto n = torch::randint(min_length, max_part + 1, {1}, generator).item<std::int64_t>();
    return to_ids(torch::randint(1, vocab, {n}, generator, torch::kLong));
  };
  std::vector<PreferenceExample> examples;
  for (int i = 0; i < count; ++i) {
    auto prompt = ids(1);
    auto chosen = ids(0);
    auto rejected = ids(0);
    examples.push_back({prompt, chosen, rejected});
  }
  return examples;
}

TransformerLM tiny_model(std::uint64_t seed, std::int64_t vocab = 40) {
  torch::manual_seed(seed);
  return TransformerLM(TransformerLMOptions(vocab, /*embedding_dim=*/16, /*num_layers=*/2,
                                            /*num_heads=*/2, /*max_seq_len=*/24));
}

/// −log σ(z) for one double, written the stable way for either sign of z.
double minus_log_sigmoid(double z) {
  return z >= 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
}

std::vector<double> values(const torch::Tensor& t) {
  const auto flat = t.to(torch::kCPU, torch::kDouble).contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

}  // namespace

TEST_CASE("dpo_loss_matches_a_float64_computation", "[dpo]") {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    auto generator = seeded(seed);
    const auto batch = 1 + static_cast<std::int64_t>(seed % 5);
    const double beta = 0.05 + 0.2 * static_cast<double>(seed % 4);
    const auto draw = [&] { return -20.0 * torch::rand({batch}, generator, torch::kDouble); };
    // The policy's log-probs require gradients, as in training: a metric left on the graph shows.
    const auto pc = draw().requires_grad_(), pr = draw().requires_grad_(), rc = draw(), rr = draw();
    const auto [loss, metrics] = dpo_loss(pc, pr, rc, rr, beta);
    const auto a = values(pc), b = values(pr), c = values(rc), d = values(rr);
    double sum_loss = 0, sum_chosen = 0, sum_rejected = 0, wins = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double chosen = beta * (a[i] - c[i]), rejected = beta * (b[i] - d[i]);
      sum_loss += minus_log_sigmoid(beta * ((a[i] - b[i]) - (c[i] - d[i])));
      sum_chosen += chosen;
      sum_rejected += rejected;
      wins += chosen > rejected ? 1.0 : 0.0;
    }
    const auto n = static_cast<double>(a.size());
    CHECK(loss.scalar_type() == torch::kDouble);
    CHECK(std::abs(loss.item<double>() - sum_loss / n) < 1e-12);
    CHECK(std::abs(metrics.chosen_reward.item<double>() - sum_chosen / n) < 1e-12);
    CHECK(std::abs(metrics.rejected_reward.item<double>() - sum_rejected / n) < 1e-12);
    CHECK(std::abs(metrics.reward_margin.item<double>() - (sum_chosen - sum_rejected) / n) < 1e-12);
    CHECK(metrics.accuracy.item<double>() == wins / n);
    for (const auto& m : {metrics.chosen_reward, metrics.rejected_reward, metrics.reward_margin,
                          metrics.accuracy}) {
      CHECK_FALSE(m.requires_grad());
    }
  }
}

TEST_CASE("dpo_loss_is_stable_for_large_margins", "[dpo]") {
  // log σ through log_sigmoid: a margin of ±1000 nats neither overflows nor gives log(0).
  const auto [low, m1] = dpo_loss(torch::tensor({0.0}), torch::tensor({-1000.0}),
                                  torch::tensor({0.0}), torch::tensor({0.0}), 1.0);
  const auto [high, m2] = dpo_loss(torch::tensor({-1000.0}), torch::tensor({0.0}),
                                   torch::tensor({0.0}), torch::tensor({0.0}), 1.0);
  CHECK(std::abs(low.item<double>()) < 1e-6);
  CHECK(high.item<double>() == Approx(1000.0).epsilon(1e-6));
}

TEST_CASE("dpo_loss_gradient_matches_finite_differences", "[dpo]") {
  auto generator = seeded(4);
  const double beta = 0.3;
  auto pc = -5.0 * torch::rand({4}, generator, torch::kDouble);
  auto pr = -5.0 * torch::rand({4}, generator, torch::kDouble);
  const auto rc = -5.0 * torch::rand({4}, generator, torch::kDouble);
  const auto rr = -5.0 * torch::rand({4}, generator, torch::kDouble);
  const auto leaf_c = pc.clone().requires_grad_(), leaf_r = pr.clone().requires_grad_();
  const auto grads =
      torch::autograd::grad({dpo_loss(leaf_c, leaf_r, rc, rr, beta).loss}, {leaf_c, leaf_r});
  const auto objective = [&] { return dpo_loss(pc, pr, rc, rr, beta).loss; };
  CHECK(max_abs_diff(grads[0], g2c::testing::numeric_gradient(objective, pc)) < 1e-8);
  CHECK(max_abs_diff(grads[1], g2c::testing::numeric_gradient(objective, pr)) < 1e-8);
  // The closed form: dL/dπ_c = −β σ(−z) / B with z = β((π_c − π_r) − (ref_c − ref_r)).
  const auto z = beta * ((pc - pr) - (rc - rr));
  CHECK(max_abs_diff(grads[0], -beta * torch::sigmoid(-z) / 4.0) < 1e-12);
  CHECK(max_abs_diff(grads[1], beta * torch::sigmoid(-z) / 4.0) < 1e-12);
}

TEST_CASE("sequence_logprob_matches_gather_of_log_softmax", "[dpo]") {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    auto generator = seeded(seed);
    const auto batch = 1 + static_cast<std::int64_t>(seed % 3);
    const auto length = 1 + static_cast<std::int64_t>(seed % 6);
    const auto vocab = 2 + static_cast<std::int64_t>(seed % 9);
    const auto logits =
        (3.0 * torch::randn({batch, length, vocab}, generator, torch::kDouble)).requires_grad_();
    const auto targets = torch::randint(vocab, {batch, length}, generator, torch::kLong);
    const auto mask = torch::randint(2, targets.sizes(), generator, torch::kLong);
    const auto ours = sequence_logprob(logits, targets, seed % 2 ? mask : mask.to(torch::kDouble));
    // The oracle, one position at a time.
    const auto log_probs = torch::log_softmax(logits.detach(), -1);
    std::vector<double> expected(static_cast<std::size_t>(batch), 0.0);
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t t = 0; t < length; ++t) {
        if (mask[b][t].item<std::int64_t>() == 0) continue;
        expected[static_cast<std::size_t>(b)] +=
            log_probs[b][t][targets[b][t].item<std::int64_t>()].item<double>();
      }
    }
    REQUIRE(ours.sizes() == torch::IntArrayRef({batch}));
    CHECK(max_abs_diff(ours, torch::tensor(expected, torch::kDouble)) < 1e-12);
    // Positions that do not count get no gradient at all.
    const auto grad = torch::autograd::grad({ours.sum()}, {logits})[0];
    const auto uncounted = (mask == 0).unsqueeze(-1).expand_as(grad);
    if (uncounted.any().item<bool>()) {
      CHECK(grad.masked_select(uncounted).abs().max().item<double>() == 0.0);
    }
  }
}

TEST_CASE("sequence_logprob_gradient_matches_finite_differences", "[dpo]") {
  auto generator = seeded(9);
  auto logits = torch::randn({2, 3, 4}, generator, torch::kDouble);
  const auto targets = torch::randint(4, {2, 3}, generator, torch::kLong);
  const auto mask = torch::tensor({{1, 0, 1}, {0, 1, 1}}, torch::kLong);
  const auto weights = torch::tensor({0.7, -1.3}, torch::kDouble);  // mixes the two examples
  const auto analytic = [&] {
    const auto leaf = logits.clone().requires_grad_();
    return torch::autograd::grad({(sequence_logprob(leaf, targets, mask) * weights).sum()},
                                 {leaf})[0];
  }();
  const auto numeric = g2c::testing::numeric_gradient(
      [&] { return (sequence_logprob(logits, targets, mask) * weights).sum(); }, logits);
  CHECK(max_abs_diff(analytic, numeric) < 1e-8);
}

TEST_CASE("pad_and_collate_pref_on_random_examples", "[dpo]") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto examples = random_examples(5, 7, 50, seed);
    const std::int64_t max_seq_len = 2 + static_cast<std::int64_t>(seed % 12);
    const auto batch = pad_and_collate_pref(examples, max_seq_len, /*pad_id=*/63);
    for (const auto& t : {batch.chosen_x, batch.chosen_y, batch.chosen_mask, batch.rejected_x,
                          batch.rejected_y, batch.rejected_mask}) {
      REQUIRE(t.sizes() == torch::IntArrayRef({5, max_seq_len - 1}));
      CHECK(t.scalar_type() == torch::kLong);
    }
    // One side's padded, truncated row and mask, built independently.
    const auto expect = [&](const Ids& prompt, const Ids& answer, const torch::Tensor& x,
                            const torch::Tensor& y, const torch::Tensor& mask) {
      Ids ids(static_cast<std::size_t>(max_seq_len), 63), bits(ids.size(), 0);
      for (std::size_t t = 0; t < ids.size(); ++t) {
        if (t < prompt.size()) {
          ids[t] = prompt[t];
        } else if (t < prompt.size() + answer.size()) {
          ids[t] = answer[t - prompt.size()];
          bits[t] = 1;
        }
      }
      CHECK(to_ids(x) == Ids(ids.begin(), ids.end() - 1));
      CHECK(to_ids(y) == Ids(ids.begin() + 1, ids.end()));
      CHECK(to_ids(mask) == Ids(bits.begin() + 1, bits.end()));
    };
    for (std::size_t b = 0; b < examples.size(); ++b) {
      const auto i = static_cast<std::int64_t>(b);
      const auto& [prompt, chosen, rejected] = examples[b];
      expect(prompt, chosen, batch.chosen_x[i], batch.chosen_y[i], batch.chosen_mask[i]);
      expect(prompt, rejected, batch.rejected_x[i], batch.rejected_y[i], batch.rejected_mask[i]);
    }
  }
}

TEST_CASE("the_reference_is_frozen_in_eval_mode_and_unchanged_by_training", "[dpo]") {
  auto model = tiny_model(1);
  auto reference = tiny_model(1);
  std::vector<torch::Tensor> before;
  for (const auto& p : reference->parameters()) before.push_back(p.detach().clone());
  DPOTrainer trainer(
      model, reference, random_examples(6, 5, 40, 2),
      with_recipe(DPOTrainerOptions(12, 0, 0.5, 3, /*max_steps=*/5, 1e-2),
                  [&](auto& recipe) { recipe.grad_clip(1.0).device("cpu").generator(seeded(3)); }));
  CHECK_FALSE(reference->is_training());
  for (const auto& p : reference->parameters()) CHECK_FALSE(p.requires_grad());
  for (const auto& p : model->parameters()) CHECK(p.requires_grad());
  const auto history = trainer.train();
  const auto after = reference->parameters();
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(torch::equal(before[i], after[i]));
    CHECK_FALSE(after[i].grad().defined());
  }
  // The policy moved: otherwise an unchanged reference proves nothing.
  const auto policy = model->parameters();
  double moved = 0.0;
  for (std::size_t i = 0; i < policy.size(); ++i) {
    moved = std::max(moved, max_abs_diff(policy[i], after[i]));
  }
  CHECK(moved > 1e-4);
  CHECK(history.extra.at("reward_margin").back() != 0.0);
}

TEST_CASE("dpo_trainer_through_module_10s_loop_matches_a_written_out_loop", "[dpo]") {
  const auto examples = random_examples(9, 6, 40, 11);
  const auto eval_examples = random_examples(4, 6, 40, 12);
  const auto options =
      with_recipe(DPOTrainerOptions(/*max_seq_len=*/12, /*pad_id=*/0, /*beta=*/0.2,
                                    /*batch_size=*/3, /*max_steps=*/7, /*max_lr=*/3e-3),
                  [&](auto& recipe) {
                    recipe.warmup_steps(2)
                        .min_lr(1e-4)
                        .weight_decay(0.1)
                        .grad_clip(0.5)
                        .log_every(3)
                        .eval_every(4)
                        .eval_iters(2)
                        .device("cpu");
                  });
  auto model = tiny_model(1);
  DPOTrainer trainer(model, tiny_model(1), examples,
                     with_recipe(options, [&](auto& recipe) { recipe.generator(seeded(8)); }));
  std::vector<std::int64_t> on_log_steps;
  const auto history =
      trainer.train(eval_examples,
                    g2c::pretraining::RunOptions().on_log([&](const g2c::pretraining::LogEvent& e) {
                      on_log_steps.push_back(e.step);
                    }));

  // The same run written out: the same draws, collation, log-probs, loss, schedule, clipping and
  // AdamW; the reference is a second copy of the starting weights.
  auto twin = tiny_model(1);
  auto reference = tiny_model(1);
  auto generator = seeded(8);
  g2c::nn::AdamW optimizer(twin->parameters(), g2c::nn::AdamWOptions(3e-3).weight_decay(0.1));
  const auto draw = [&](const std::vector<PreferenceExample>& from) {
    const auto picks =
        torch::randint(static_cast<std::int64_t>(from.size()), {3}, generator, torch::kLong);
    std::vector<PreferenceExample> picked;
    for (const auto index : to_ids(picks)) picked.push_back(from[static_cast<std::size_t>(index)]);
    return pad_and_collate_pref(picked, 12, 0);
  };
  const auto four = [&](const g2c::dpo::PreferenceBatch& b) {
    const auto pc = sequence_logprob(twin->forward(b.chosen_x), b.chosen_y, b.chosen_mask);
    const auto pr = sequence_logprob(twin->forward(b.rejected_x), b.rejected_y, b.rejected_mask);
    torch::Tensor rc, rr;
    {
      torch::NoGradGuard no_grad;
      rc = sequence_logprob(reference->forward(b.chosen_x), b.chosen_y, b.chosen_mask);
      rr = sequence_logprob(reference->forward(b.rejected_x), b.rejected_y, b.rejected_mask);
    }
    return dpo_loss(pc, pr, rc, rr, 0.2);
  };
  std::vector<double> losses, margins, accuracies, val_losses, val_margins;
  std::vector<std::int64_t> logged, evaluated;
  for (std::int64_t step = 0; step < 7; ++step) {
    const auto batch = draw(examples);
    optimizer.lr = g2c::training::cosine_with_warmup(step, 2, 7, 3e-3, 1e-4);
    optimizer.zero_grad();
    const auto [loss, metrics] = four(batch);
    loss.backward();
    g2c::training::clip_grad_norm_(twin->parameters(), 0.5);
    optimizer.step();
    if (step % 3 == 0 || step == 6) {
      logged.push_back(step);
      losses.push_back(loss.item<double>());
      margins.push_back(metrics.reward_margin.item<double>());
      accuracies.push_back(metrics.accuracy.item<double>());
    }
    if (step % 4 == 0 || step == 6) {
      torch::NoGradGuard no_grad;
      double sum = 0.0, margin = 0.0;
      for (int i = 0; i < 2; ++i) {
        const auto [val, val_metrics] = four(draw(eval_examples));
        sum += val.item<double>();
        margin += val_metrics.reward_margin.item<double>();
      }
      evaluated.push_back(step);
      val_losses.push_back(sum / 2.0);
      val_margins.push_back(margin / 2.0);
    }
  }
  CHECK(history.step == logged);
  CHECK(history.train_loss == losses);
  CHECK(history.extra.at("reward_margin") == margins);
  CHECK(history.extra.at("accuracy") == accuracies);
  CHECK(history.extra.at("chosen_reward").size() == logged.size());
  CHECK(history.extra.at("rejected_reward").size() == logged.size());
  CHECK(history.val_step == evaluated);
  CHECK(history.val_loss == val_losses);
  CHECK(history.val_extra.at("reward_margin") == val_margins);
  CHECK(history.val_extra.at("accuracy").size() == evaluated.size());
  CHECK(on_log_steps == std::vector<std::int64_t>{0, 3, 4, 6});
  const auto params = model->parameters(), twin_params = twin->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) CHECK(torch::equal(params[i], twin_params[i]));
  const auto json = history.to_json();
  for (const char* key :
       {"step", "train_loss", "lr", "grad_norm", "chosen_reward", "rejected_reward",
        "reward_margin", "accuracy", "val_step", "val_loss", "val_accuracy", "val_reward_margin"}) {
    CHECK(json.contains(key));
  }
  CHECK(json.size() == 12);  // the Python edition's keys, no more
  CHECK(json["reward_margin"].size() == logged.size());
}

TEST_CASE("dpo_bad_input_messages", "[dpo]") {
  const auto x = torch::tensor({-1.0, -2.0});
  CHECK_THROWS_WITH(dpo_loss(x, x, x, x, 0.0), Contains("beta > 0"));
  CHECK_THROWS_WITH(dpo_loss(x, x, x, x, -0.1), Contains("beta > 0"));
  CHECK_THROWS_WITH(dpo_loss(x, x, torch::tensor({-1.0}), x, 0.1), Contains("the same (B,)"));
  CHECK_THROWS_WITH(dpo_loss(x.view({1, 2}), x, x, x, 0.1), Contains("(B,) log-probabilities"));
  const auto logits = torch::randn({2, 3, 5});
  CHECK_THROWS_WITH(
      sequence_logprob(logits, torch::zeros({2, 3}, torch::kLong), torch::ones({2, 4})),
      Contains("shaped like the targets"));
  CHECK_THROWS_WITH(sequence_logprob(logits, torch::zeros({2, 3}), torch::ones({2, 3})),
                    Contains("integer targets"));
  CHECK_THROWS_WITH(pad_and_collate_pref({}, 4, 0), Contains("at least one preference example"));
  CHECK_THROWS_WITH(pad_and_collate_pref({{{1}, {2}, {3}}}, 1, 0), Contains("at least 2"));

  auto model = tiny_model(0);
  const auto examples = random_examples(2, 4, 40, 0);
  const auto options = DPOTrainerOptions(8, 0, 0.1, 2, 10, 1e-3);
  CHECK_THROWS_WITH(DPOTrainer(model, tiny_model(0), {}, options),
                    Contains("at least one preference example"));
  CHECK_THROWS_WITH(
      DPOTrainer(model, tiny_model(0), examples, DPOTrainerOptions(options).beta(0.0)),
      Contains("beta must be positive"));
  CHECK_THROWS_WITH(DPOTrainer(model, tiny_model(0), examples, DPOTrainerOptions(options).beta(-1)),
                    Contains("beta must be positive"));
  CHECK_THROWS_WITH(DPOTrainer(model, tiny_model(0), examples,
                               with_recipe(options, [&](auto& recipe) { recipe.batch_size(-1); })),
                    Contains("batch_size must be positive"));
  CHECK_THROWS_WITH(
      DPOTrainer(model, tiny_model(0), examples, DPOTrainerOptions(options).max_seq_len(1)),
      Contains("max_seq_len must be > 1"));
  CHECK_THROWS_WITH(DPOTrainer(model, model, examples, options), Contains("the policy itself"));
  CHECK_THROWS_WITH(DPOTrainer(model.ptr(), nullptr, examples, options),
                    Contains("needs a reference model"));
  CHECK_THROWS_WITH(
      DPOTrainer(model, tiny_model(0), examples,
                 with_recipe(options, [&](auto& recipe) { recipe.optimizer("adam"); })),
      Contains("'sgd', 'adamw' or 'muon'"));
  // A refused construction leaves the policy trainable: the checks run before anything is frozen.
  for (const auto& p : model->parameters()) CHECK(p.requires_grad());
  DPOTrainer trainer(model, tiny_model(0), examples, options);
  CHECK_THROWS_WITH(trainer.evaluate({}), Contains("at least one preference example"));
  CHECK_THROWS_WITH(trainer.sample_batch({}), Contains("empty list"));
}
