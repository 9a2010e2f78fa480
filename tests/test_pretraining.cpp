// Module 10 course tests: the Trainer, one for one with the Python edition's
// tests/test_pretraining.py, plus a CUDA twin of the MPS device test. Tests tagged [clean] pass on
// the scaffold (construction is provided).
//
// Suggested order: confirm module 09b (ctest -L 09b), then write Trainer::train_step in
// g2c/pretraining/trainer.cpp and turn green trainer_train_step_*, trainer_evaluate_* and
// trainer_train_*. The trainer_lr_* tests only need module 03b's cosine_with_warmup. Everything
// that trains runs a tiny TransformerLM (V 12, D 8, L 1, H 2, max_seq_len 16), so it needs modules
// 03, 03b, 05, 08, 09 and 09b written too (or `-DG2C_SOLUTIONS=03-09`).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <unistd.h>

#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/training/schedule.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::pretraining::Checkpoint;
using g2c::pretraining::empty_training_history;
using g2c::pretraining::LogEvent;
using g2c::pretraining::RunOptions;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;
using g2c::pretraining::TrainingHistory;
using g2c::training::cosine_with_warmup;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// The miniature TransformerLM of the trainer tests: seed 0, V 12, D 8, L 1, H 2, max 16.
TransformerLM tiny_model() {
  torch::manual_seed(0);
  return TransformerLM(TransformerLMOptions(/*vocab_size=*/12, /*embedding_dim=*/8,
                                            /*num_layers=*/1, /*num_heads=*/2,
                                            /*max_seq_len=*/16));
}

/// The options most tests start from: batch 4, context 6.
TrainerOptions base_options(std::int64_t max_steps, double max_lr) {
  return TrainerOptions(/*batch_size=*/4, /*context_length=*/6, max_steps, max_lr);
}

torch::Tensor random_corpus(std::int64_t n = 200) {
  return torch::randint(0, 12, {n}, torch::kLong);
}

/// A fresh, empty folder under the system temporary folder (pytest's tmp_path).
std::filesystem::path temporary_folder(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() /
                      ("g2c-test-pretraining-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

double global_grad_norm(const std::vector<torch::Tensor>& params) {
  double total = 0.0;
  for (const auto& p : params) {
    if (p.grad().defined()) total += p.grad().pow(2).sum().item<double>();
  }
  return std::sqrt(total);
}

/// The device test on one accelerator: parameters move, the batch follows, gradients stay there.
void check_trainer_on(const torch::Device& device) {
  torch::manual_seed(0);
  auto model = tiny_model();
  Trainer trainer(model, base_options(10, 1e-3).device(g2c::nn::device_name(device)));
  for (const auto& p : model->parameters()) CHECK(p.device().type() == device.type());
  const auto ids = random_corpus();  // the corpus can stay on the CPU
  const auto metrics = trainer.train_step(ids);
  CHECK(metrics.loss > 0);
  for (const auto& p : model->parameters()) {
    if (p.grad().defined()) CHECK(p.grad().device().type() == device.type());
  }
}

}  // namespace

// --- Construction -------------------------------------------------------------------------------

TEST_CASE("trainer_construction", "[clean]") {
  Trainer trainer(tiny_model(), base_options(10, 1e-3));
  CHECK(trainer.step == 0);
}

TEST_CASE("trainer_construction_stores_args", "[clean]") {
  auto model = tiny_model();
  Trainer trainer(model, TrainerOptions(/*batch_size=*/8, /*context_length=*/4, /*max_steps=*/200,
                                        /*max_lr=*/2e-3)
                             .min_lr(1e-5)
                             .warmup_steps(20)
                             .weight_decay(0.01)
                             .grad_clip(1.0)
                             .eval_every(50)
                             .eval_iters(5)
                             .log_every(2));
  CHECK(trainer.model.get() == model.ptr().get());
  CHECK(trainer.options.batch_size() == 8);
  CHECK(trainer.options.context_length() == 4);
  CHECK(trainer.options.max_steps() == 200);
  CHECK(trainer.options.max_lr() == 2e-3);
  CHECK(trainer.options.min_lr() == 1e-5);
  CHECK(trainer.options.warmup_steps() == 20);
  CHECK(trainer.options.weight_decay() == 0.01);
  CHECK(trainer.options.grad_clip() == 1.0);
  CHECK(trainer.options.eval_every() == 50);
  CHECK(trainer.options.eval_iters() == 5);
  CHECK(trainer.options.log_every() == 2);
}

TEST_CASE("trainer_defaults", "[clean]") {
  Trainer trainer(tiny_model(), base_options(10, 1e-3));
  CHECK(trainer.options.min_lr() == 0.0);
  CHECK(trainer.options.warmup_steps() == 0);
  CHECK(trainer.options.weight_decay() == 0.0);
  CHECK_FALSE(trainer.options.grad_clip().has_value());
  CHECK(trainer.optimizer_name == "sgd");
  CHECK(trainer.device == g2c::nn::resolve_device("auto"));
}

TEST_CASE("trainer_explicit_cpu_device_moves_model_params", "[clean]") {
  auto model = tiny_model();
  Trainer trainer(model, base_options(10, 1e-3).device("cpu"));
  CHECK(trainer.device == torch::Device(torch::kCPU));
  for (const auto& p : model->parameters()) CHECK(p.device().is_cpu());
}

TEST_CASE("trainer_explicit_mps_device_moves_model_params_and_batches", "[accelerator]") {
  if (!torch::hasMPS()) G2C_SKIP("MPS is not available on this machine");
  check_trainer_on(torch::Device(torch::kMPS));
}

TEST_CASE("trainer_explicit_cuda_device_moves_model_params_and_batches", "[accelerator]") {
  if (!torch::cuda::is_available()) G2C_SKIP("CUDA is not available on this machine");
  check_trainer_on(torch::Device(torch::kCUDA));
}

TEST_CASE("trainer_step_starts_at_zero", "[clean]") {
  Trainer trainer(tiny_model(), base_options(10, 1e-3));
  CHECK(trainer.step == 0);
}

TEST_CASE("trainer_optimizer_is_sgd", "[clean]") {
  Trainer trainer(tiny_model(), base_options(10, 1e-3).weight_decay(0.05));
  const auto* sgd = dynamic_cast<g2c::nn::SGD*>(trainer.optimizer.get());
  REQUIRE(sgd != nullptr);
  CHECK(sgd->lr == 1e-3);
  CHECK(sgd->weight_decay == 0.05);
}

TEST_CASE("trainer_can_construct_adamw_optimizer", "[clean]") {
  Trainer trainer(tiny_model(), base_options(10, 3e-4).weight_decay(0.01).optimizer("adamw"));
  CHECK(trainer.optimizer_name == "adamw");
  const auto* adamw = dynamic_cast<g2c::nn::AdamW*>(trainer.optimizer.get());
  REQUIRE(adamw != nullptr);
  CHECK(adamw->lr == 3e-4);
  CHECK(adamw->weight_decay == 0.01);
}

TEST_CASE("trainer_rejects_unknown_optimizer", "[clean]") {
  CHECK_THROWS_AS(Trainer(tiny_model(), base_options(10, 1e-3).optimizer("rmsprop")),
                  g2c::ValueError);
  CHECK_THROWS_WITH(Trainer(tiny_model(), base_options(10, 1e-3).optimizer("rmsprop")),
                    Contains("optimizer"));
}

// --- Trainer::lr (module 03b's schedule) --------------------------------------------------------

TEST_CASE("trainer_lr_explicit_step_uses_schedule") {
  Trainer trainer(tiny_model(), base_options(110, 1e-3).warmup_steps(10));
  CHECK(trainer.lr(9) == py_approx(1e-3));      // end of warmup: max_lr
  CHECK(trainer.lr(110) == within(0.0, 1e-9));  // end of the cosine: min_lr
}

TEST_CASE("trainer_lr_default_uses_self_step") {
  Trainer trainer(tiny_model(), base_options(20, 1e-3).warmup_steps(10));
  trainer.step = 5;
  const double expected =
      cosine_with_warmup(5, /*warmup_steps=*/10, /*max_steps=*/20, /*max_lr=*/1e-3);
  CHECK(trainer.lr() == py_approx(expected));
}

// --- Trainer::train_step (your work) ------------------------------------------------------------

TEST_CASE("trainer_train_step_increments_step_counter") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3));
  const auto ids = random_corpus();
  CHECK(trainer.step == 0);
  trainer.train_step(ids);
  CHECK(trainer.step == 1);
  trainer.train_step(ids);
  CHECK(trainer.step == 2);
}

TEST_CASE("trainer_train_step_returns_metrics_dict") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3).warmup_steps(2).grad_clip(1.0));
  const auto metrics = trainer.train_step(random_corpus());
  CHECK(metrics.loss > 0);       // cross-entropy of an untrained model
  CHECK(metrics.lr > 0);         // the first warmup step
  CHECK(metrics.grad_norm > 0);  // clipping was on, so the norm was measured
}

TEST_CASE("trainer_train_step_writes_lr_to_optimizer") {
  // Forgetting to write the schedule's lr trains at max_lr forever, ignoring the warmup.
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(20, 1e-2).warmup_steps(10));
  trainer.train_step(random_corpus());
  const double expected = cosine_with_warmup(0, /*warmup_steps=*/10, /*max_steps=*/20,
                                             /*max_lr=*/1e-2);
  INFO("after step 0 the optimizer's lr is " << trainer.optimizer->lr
                                             << "; step 0 of a 10-step "
                                                "warmup to 1e-2 uses "
                                             << expected
                                             << ": write lr() to optimizer->lr before the update");
  CHECK(trainer.optimizer->lr == py_approx(expected));
}

TEST_CASE("trainer_train_step_reports_the_rate_it_used") {
  // An edition addition. Reading lr() after step += 1 reports (and plots) the next step's rate.
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(20, 1e-2).warmup_steps(10));
  const auto ids = random_corpus();
  const double first = trainer.train_step(ids).lr;
  const double second = trainer.train_step(ids).lr;
  const double step_0 = cosine_with_warmup(0, 10, 20, 1e-2);
  const double step_1 = cosine_with_warmup(1, 10, 20, 1e-2);
  INFO("train_step reported lr " << first << " then " << second << "; steps 0 and 1 use " << step_0
                                 << " and " << step_1
                                 << ": keep the rate you read with lr() before step += 1 and "
                                    "return that one");
  CHECK(first == py_approx(step_0));
  CHECK(second == py_approx(step_1));
}

TEST_CASE("trainer_train_step_no_grad_clip_returns_zero_norm") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3));
  CHECK(trainer.train_step(random_corpus()).grad_norm == 0.0);
}

TEST_CASE("trainer_train_step_clips_grads") {
  // With tied embeddings the head *is* token_embed.weight: inflating it makes the logits, the
  // loss and the gradients large, so the clip has to fire.
  torch::manual_seed(0);
  auto model = tiny_model();
  {
    torch::NoGradGuard no_grad;
    model->token_embed->weight.mul_(100.0);
  }
  Trainer trainer(model, base_options(10, 1e-3).grad_clip(0.5));
  const auto metrics = trainer.train_step(random_corpus());
  INFO("grad_norm must be the norm before clipping (here "
       << metrics.grad_norm << "): return what clip_grad_norm_ returns");
  CHECK(metrics.grad_norm > 0.5);  // the pre-clip norm: clipping really scaled the gradients
  const double after = global_grad_norm(model->parameters());
  INFO("the gradients left in .grad have norm "
       << after
       << ", more than grad_clip = 0.5: call "
          "g2c::training::clip_grad_norm_(model->parameters(), *options.grad_clip())");
  CHECK(after <= 0.5 + 1e-3);
}

TEST_CASE("trainer_train_step_clips_before_the_update") {
  // An edition addition. Clipping after optimizer->step() leaves clipped gradients in .grad, so
  // trainer_train_step_clips_grads passes, but the update has already used the raw gradients.
  torch::manual_seed(0);
  auto model = tiny_model();
  {
    torch::NoGradGuard no_grad;
    model->token_embed->weight.mul_(100.0);  // large logits, large gradients
  }
  // SGD (the default) at lr 1 on step 0: the update is exactly the (clipped) gradient.
  Trainer trainer(model, base_options(10, /*max_lr=*/1.0).grad_clip(0.5));
  std::vector<torch::Tensor> before;
  for (const auto& p : model->parameters()) before.push_back(p.detach().clone());
  const auto metrics = trainer.train_step(random_corpus());
  REQUIRE(metrics.grad_norm > 0.5);
  double squared = 0.0;
  const auto params = model->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    squared += (params[i].detach() - before[i]).pow(2).sum().item<double>();
  }
  const double moved = std::sqrt(squared);
  INFO(
      "SGD at lr 1 with gradients clipped to norm 0.5 moves the parameters by at most 0.5; they "
      "moved by "
      << moved << " (the raw gradient norm is " << metrics.grad_norm
      << "): clip after backward() and before optimizer->step()");
  CHECK(moved <= 0.5 + 1e-4);
}

TEST_CASE("trainer_train_step_decreases_loss_on_fixed_batch") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), TrainerOptions(/*batch_size=*/4, /*context_length=*/4,
                                               /*max_steps=*/30, /*max_lr=*/0.5));
  const auto ids = random_corpus(30);  // 30 tokens: few windows, easy to overfit
  const double initial_loss = trainer.train_step(ids).loss;
  double last_loss = initial_loss;
  for (int i = 0; i < 29; ++i) last_loss = trainer.train_step(ids).loss;
  INFO("30 steps on 30 tokens at lr 0.5 took the loss from "
       << initial_loss << " to " << last_loss
       << "; it must fall below 70 % of the start. A loss that does not move: zero_grad, backward "
          "and step all happen, in that order, and the model's own parameters are updated (a head "
          "on a detached token table trains less)");
  CHECK(last_loss < initial_loss * 0.7);
}

// --- Trainer::evaluate --------------------------------------------------------------------------

TEST_CASE("trainer_evaluate_returns_float") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3).eval_iters(3));
  const double loss = trainer.evaluate(random_corpus());
  CHECK(loss > 0);
  CHECK(std::isfinite(loss));
}

TEST_CASE("trainer_evaluate_does_not_populate_grads") {
  torch::manual_seed(0);
  auto model = tiny_model();
  Trainer trainer(model, base_options(10, 1e-3).eval_iters(3));
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  trainer.evaluate(random_corpus());
  for (const auto& p : model->parameters()) CHECK_FALSE(p.grad().defined());
}

// --- Trainer::train -----------------------------------------------------------------------------

TEST_CASE("trainer_train_runs_max_steps") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(8, 1e-3));
  trainer.train(random_corpus());
  CHECK(trainer.step == 8);
}

TEST_CASE("trainer_train_history_contains_keys") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3).log_every(2));
  const auto history = trainer.train(random_corpus());
  const auto json = history.to_json();
  for (const char* key : {"step", "train_loss", "lr", "grad_norm", "val_step", "val_loss"}) {
    CHECK(json.contains(key));
  }
  CHECK(history.val_step.empty());  // no validation ids
  CHECK(history.val_loss.empty());
  CHECK(history.train_loss.size() >= 5);  // steps 0, 2, 4, 6, 8 and the last, 9
}

TEST_CASE("trainer_train_records_val_loss") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(10, 1e-3).eval_every(5).eval_iters(2));
  const auto train_ids = random_corpus();
  const auto val_ids = random_corpus();
  const auto history = trainer.train(train_ids, RunOptions().val_ids(val_ids));
  CHECK_FALSE(history.val_loss.empty());
  for (const double v : history.val_loss) CHECK(std::isfinite(v));
}

TEST_CASE("trainer_train_on_log_receives_progress_events") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(6, 1e-3).eval_every(3).eval_iters(1).log_every(2));
  const auto ids = random_corpus();
  std::vector<LogEvent> events;
  trainer.train(ids, RunOptions().val_ids(ids).on_log(
                         [&](const LogEvent& event) { events.push_back(event); }));
  REQUIRE_FALSE(events.empty());
  CHECK(events.front().step == 0);
  CHECK(events.back().step == 5);
  bool any_val = false;
  for (const auto& event : events) {
    any_val = any_val || event.val_loss.has_value();
    CHECK(event.elapsed_s >= 0.0);
    CHECK(event.steps_per_s >= 0.0);
  }
  CHECK(any_val);
}

TEST_CASE("empty_training_history_has_standard_keys", "[clean]") {
  const auto json = empty_training_history().to_json();
  const nlohmann::json expected = {
      {"step", nlohmann::json::array()},     {"train_loss", nlohmann::json::array()},
      {"lr", nlohmann::json::array()},       {"grad_norm", nlohmann::json::array()},
      {"val_step", nlohmann::json::array()}, {"val_loss", nlohmann::json::array()}};
  CHECK(json == expected);
}

TEST_CASE("trainer_train_appends_to_existing_history") {
  torch::manual_seed(0);
  Trainer trainer(tiny_model(), base_options(3, 1e-3).log_every(1));
  const auto ids = random_corpus();
  TrainingHistory history = trainer.train(ids);
  trainer.options.max_steps(5);
  TrainingHistory& resumed = trainer.train(ids, history);
  CHECK(&resumed == &history);
  CHECK(trainer.step == 5);
  CHECK(resumed.step == std::vector<std::int64_t>{0, 1, 2, 3, 4});
}

TEST_CASE("trainer_checkpoint_round_trip_restores_adamw_state") {
  torch::manual_seed(0);
  const auto ids = random_corpus();
  Trainer first(tiny_model(), base_options(2, 3e-4)
                                  .optimizer("adamw")
                                  .generator(at::make_generator<at::CPUGeneratorImpl>(123))
                                  .log_every(1));
  const auto history = first.train(ids);
  const auto path = temporary_folder("round-trip") / "storylm.pt";
  first.save_checkpoint(path, history, {{"name", "StoryLM test"}});

  Trainer second(tiny_model(), base_options(4, 3e-4)
                                   .optimizer("adamw")
                                   .generator(at::make_generator<at::CPUGeneratorImpl>(999))
                                   .log_every(1));
  Checkpoint checkpoint = second.load_checkpoint(path);

  CHECK(second.step == first.step);
  CHECK(checkpoint.history == history);
  CHECK(checkpoint.extra["name"] == "StoryLM test");
  const auto& a = dynamic_cast<g2c::nn::AdamW&>(*first.optimizer);
  const auto& b = dynamic_cast<g2c::nn::AdamW&>(*second.optimizer);
  CHECK(b.step_count == a.step_count);
  INFO("AdamW keeps one m and one v per parameter: the restored optimizer must have as many");
  REQUIRE(a.m.size() == a.params().size());
  REQUIRE(b.m.size() == a.m.size());
  REQUIRE(b.v.size() == a.v.size());
  const auto p1 = first.model->parameters();
  const auto p2 = second.model->parameters();
  REQUIRE(p1.size() == p2.size());
  for (std::size_t i = 0; i < p1.size(); ++i) CHECK(torch::allclose(p1[i], p2[i]));
  for (std::size_t i = 0; i < a.m.size(); ++i) CHECK(torch::allclose(a.m[i], b.m[i]));
  for (std::size_t i = 0; i < a.v.size(); ++i) CHECK(torch::allclose(a.v[i], b.v[i]));

  const auto& resumed = second.train(ids, checkpoint.history);
  CHECK(second.step == 4);
  CHECK(resumed.step.back() == 3);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("trainer_train_writes_rolling_checkpoint") {
  torch::manual_seed(0);
  const auto path = temporary_folder("rolling") / "rolling.pt";
  Trainer trainer(tiny_model(), base_options(5, 1e-3).log_every(1));
  const auto history = trainer.train(
      random_corpus(), RunOptions().checkpoint_path(path).checkpoint_every(2).checkpoint_extra(
                           {{"kind", "rolling"}}));
  REQUIRE(std::filesystem::exists(path));
  const Checkpoint checkpoint = g2c::pretraining::read_checkpoint(path);
  CHECK(checkpoint.trainer["step"] == 5);
  CHECK(checkpoint.history == history);
  CHECK(checkpoint.extra["kind"] == "rolling");
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("trainer_smoke_train_decreases_val_loss") {
  // The headline test of the module: any misordered piece (loss, schedule, clipping, the loop)
  // shows up here. The corpus 0 1 2 3 0 1 2 3 … is trivially memorizable.
  torch::manual_seed(0);
  std::vector<std::int64_t> repeating;
  for (int i = 0; i < 100; ++i) repeating.insert(repeating.end(), {0, 1, 2, 3});
  const auto ids = torch::tensor(repeating, torch::kLong);
  Trainer trainer(tiny_model(), TrainerOptions(/*batch_size=*/8, /*context_length=*/4,
                                               /*max_steps=*/50, /*max_lr=*/0.3)
                                    .warmup_steps(5)
                                    .eval_every(10)
                                    .eval_iters(4)
                                    .log_every(10));
  const auto history = trainer.train(ids, RunOptions().val_ids(ids));
  REQUIRE(history.val_loss.size() >= 2);
  CHECK(history.val_loss.back() < history.val_loss.front() * 0.7);
}
