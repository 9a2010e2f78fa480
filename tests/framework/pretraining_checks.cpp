// Module 10 framework tests: a run interrupted mid-way and resumed from its checkpoint matches an
// uninterrupted run bit for bit (losses, validation losses, parameters); checkpoint writes keep the
// previous file as .bak (never a damaged one), and a missing or corrupt checkpoint falls back to
// it, saying so (a corrupt one without a .bak is a clear ValueError); restore refuses another model
// shape or optimizer, and a refused checkpoint (AdamW moments that do not fit) leaves the trainer
// exactly as it was; one train_step equals the same step written with LibTorch's own operators.
// Model artifacts and the archive format: artifact_checks.cpp.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/archive.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/data.h"
#include "g2c/pretraining/trainer.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "pretraining_test_support.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::pretraining::LogEvent;
using g2c::pretraining::RunOptions;
using g2c::pretraining::Trainer;
using g2c::pretraining::TrainerOptions;
using g2c::pretraining::TrainingHistory;
using g2c::testing::max_abs_diff;
using g2c::testing::model_with_seed;
using g2c::testing::resumable_options;
using g2c::testing::temporary_folder;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

struct StopRun : std::runtime_error {
  StopRun() : std::runtime_error("stopped by the test, as a Ctrl-C would") {}
};

}  // namespace

TEST_CASE("resumed_run_matches_an_uninterrupted_run_exactly", "[trainer][checkpoint]") {
  torch::manual_seed(1);
  const auto train_ids = torch::randint(0, 12, {300}, torch::kLong);
  const auto val_ids = torch::randint(0, 12, {100}, torch::kLong);

  // The whole run, without a break.
  Trainer straight(model_with_seed(0), resumable_options(12));
  const auto expected = straight.train(train_ids, RunOptions().val_ids(val_ids));

  // The same run, stopped by an exception after step 6 (the trainer saves on the way out), then
  // continued by a new process: a fresh model with other weights and a generator in another state.
  const auto path = temporary_folder("resume") / "run.ckpt";
  Trainer first(model_with_seed(0), resumable_options(12));
  TrainingHistory partial;
  CHECK_THROWS_AS(
      first.train(train_ids, partial,
                  RunOptions().val_ids(val_ids).checkpoint_path(path).checkpoint_every(5).on_log(
                      [](const LogEvent& event) {
                        if (event.step == 6) throw StopRun();
                      })),
      StopRun);
  REQUIRE(first.step == 7);

  Trainer second(model_with_seed(99),
                 resumable_options(12).generator(at::make_generator<at::CPUGeneratorImpl>(12345)));
  auto checkpoint = second.load_checkpoint(path);
  REQUIRE(second.step == 7);
  const auto& resumed = second.train(train_ids, checkpoint.history, RunOptions().val_ids(val_ids));

  CHECK(resumed.step == expected.step);
  CHECK(resumed.val_step == expected.val_step);
  double loss_difference = 0.0;
  for (std::size_t i = 0; i < expected.train_loss.size(); ++i) {
    loss_difference =
        std::max(loss_difference, std::abs(resumed.train_loss[i] - expected.train_loss[i]));
  }
  for (std::size_t i = 0; i < expected.val_loss.size(); ++i) {
    loss_difference =
        std::max(loss_difference, std::abs(resumed.val_loss[i] - expected.val_loss[i]));
  }
  double param_difference = 0.0;
  const auto a = straight.model->parameters();
  const auto b = second.model->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) {
    param_difference = std::max(param_difference, max_abs_diff(a[i], b[i]));
  }
  std::cout << "largest |difference| resumed vs uninterrupted: losses " << loss_difference
            << ", parameters " << param_difference << "\n";
  CHECK(resumed.train_loss == expected.train_loss);
  CHECK(resumed.val_loss == expected.val_loss);
  CHECK(param_difference == 0.0);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("checkpoint_keeps_the_previous_file_as_bak", "[checkpoint]") {
  const auto path = temporary_folder("bak") / "run.ckpt";
  Trainer trainer(model_with_seed(0), resumable_options(4));
  trainer.step = 3;
  trainer.save_checkpoint(path);
  trainer.step = 4;
  trainer.save_checkpoint(path);
  CHECK(g2c::pretraining::read_checkpoint(path).trainer["step"] == 4);
  const auto backup = std::filesystem::path(path.string() + ".bak");
  REQUIRE(std::filesystem::exists(backup));
  CHECK(g2c::pretraining::read_checkpoint(backup).trainer["step"] == 3);
  // No temporary files are left beside them.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(path.parent_path())) {
    ++files;
  }
  CHECK(files == 2);
  // A checkpoint lost between the two renames: the last good one is the .bak.
  std::filesystem::remove(path);
  Trainer restarted(model_with_seed(0), resumable_options(4));
  restarted.load_checkpoint(path);
  CHECK(restarted.step == 3);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("checkpoint_restore_rejects_another_model_or_optimizer", "[checkpoint]") {
  const auto path = temporary_folder("reject") / "run.ckpt";
  Trainer trainer(model_with_seed(0), resumable_options(4));
  trainer.save_checkpoint(path);

  Trainer wider(model_with_seed(0, /*embedding_dim=*/16), resumable_options(4));
  CHECK_THROWS_AS(wider.load_checkpoint(path), g2c::ValueError);
  CHECK_THROWS_WITH(wider.load_checkpoint(path), Contains("(12, 8)") && Contains("(12, 16)"));
  CHECK(wider.step == 0);

  Trainer sgd(model_with_seed(0), resumable_options(4).optimizer("sgd"));
  CHECK_THROWS_WITH(sgd.load_checkpoint(path), Contains("'adamw'") && Contains("'sgd'"));

  CHECK_THROWS_AS(sgd.load_checkpoint(path.parent_path() / "missing.ckpt"), g2c::ValueError);
  g2c::write_file_atomic(path.parent_path() / "garbage.ckpt", "not a checkpoint");
  CHECK_THROWS_AS(sgd.load_checkpoint(path.parent_path() / "garbage.ckpt"), g2c::ValueError);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("train_step_matches_a_step_written_with_libtorch", "[trainer]") {
  // The oracle: torch's cross_entropy, autograd, torch::nn::utils::clip_grad_norm_ and a plain SGD
  // update on a copy of the model, with the same batch (a generator in the same state).
  torch::manual_seed(2);
  const auto ids = torch::randint(0, 12, {200}, torch::kLong);
  auto model = model_with_seed(0);
  auto oracle = model_with_seed(0);
  auto options = TrainerOptions(4, 6, /*max_steps=*/10, /*max_lr=*/0.1)
                     .warmup_steps(4)
                     .grad_clip(0.3)
                     .device("cpu")
                     .generator(at::make_generator<at::CPUGeneratorImpl>(5));
  Trainer trainer(model, options);
  const auto metrics = trainer.train_step(ids);

  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  const auto batch = g2c::pretraining::get_lm_batch(ids, 4, 6, generator);
  const auto logits = oracle->forward(batch.x);
  const auto loss =
      torch::nn::functional::cross_entropy(logits.reshape({-1, 12}), batch.y.reshape({-1}));
  loss.backward();
  const double norm = torch::nn::utils::clip_grad_norm_(oracle->parameters(), 0.3);
  const double lr = 0.1 * 1 / 4;  // warmup step 0: max_lr · 1/4
  {
    torch::NoGradGuard no_grad;
    for (auto& p : oracle->parameters()) p.sub_(lr * p.grad());
  }
  double difference = 0.0;
  const auto a = model->parameters();
  const auto b = oracle->parameters();
  for (std::size_t i = 0; i < a.size(); ++i)
    difference = std::max(difference, max_abs_diff(a[i], b[i]));
  std::cout << "largest |parameter difference| = " << difference << ", loss " << metrics.loss
            << " vs " << loss.item<double>() << ", norm " << metrics.grad_norm << " vs " << norm
            << "\n";
  CHECK(metrics.lr == Approx(lr));
  CHECK(metrics.loss == Approx(loss.item<double>()).epsilon(1e-6));
  CHECK(metrics.grad_norm == Approx(norm).epsilon(1e-5));
  CHECK(difference < 1e-6);
  CHECK(trainer.step == 1);
}

namespace {

/// Cuts a file to its first half: a write that never finished, a disk that filled up.
void truncate_to_half(const std::filesystem::path& path) {
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
}

/// Copies of everything load_checkpoint may change: parameters, AdamW moments, generator state.
std::vector<torch::Tensor> restorable_state(const Trainer& trainer) {
  std::vector<torch::Tensor> state;
  for (const auto& p : trainer.model->parameters()) state.push_back(p.detach().clone());
  const auto& adamw = dynamic_cast<const g2c::nn::AdamW&>(*trainer.optimizer);
  for (const auto& m : adamw.m) state.push_back(m.clone());
  for (const auto& v : adamw.v) state.push_back(v.clone());
  state.push_back(trainer.options.generator()->get_state());
  return state;
}

}  // namespace

TEST_CASE("corrupt_checkpoint_resumes_from_its_bak_saying_so", "[checkpoint]") {
  const auto path = temporary_folder("corrupt") / "run.ckpt";
  const auto backup = std::filesystem::path(path.string() + ".bak");
  Trainer trainer(model_with_seed(0), resumable_options(4));
  trainer.step = 3;
  trainer.save_checkpoint(path);
  trainer.step = 4;
  trainer.save_checkpoint(path);
  truncate_to_half(path);

  Trainer restarted(model_with_seed(1), resumable_options(4));
  const auto checkpoint = restarted.load_checkpoint(path);
  std::cout << "note: " << checkpoint.note << "\n";
  CHECK(restarted.step == 3);
  CHECK(checkpoint.path == backup);
  CHECK_THAT(checkpoint.note,
             Contains(path.string()) && Contains("cannot be read") && Contains(backup.string()));
  double difference = 0.0;
  const auto a = trainer.model->parameters();
  const auto b = restarted.model->parameters();
  for (std::size_t i = 0; i < a.size(); ++i)
    difference = std::max(difference, max_abs_diff(a[i], b[i]));
  CHECK(difference == 0.0);
  CHECK(g2c::pretraining::read_checkpoint(path).trainer["step"] == 3);
  // The next save replaces the damaged file and keeps the good .bak (the damaged one is not
  // copied over it).
  restarted.step = 5;
  restarted.save_checkpoint(path);
  CHECK(g2c::pretraining::read_checkpoint(path).trainer["step"] == 5);
  CHECK(g2c::pretraining::read_checkpoint(backup).trainer["step"] == 3);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("corrupt_checkpoint_without_bak_is_a_clear_value_error", "[checkpoint]") {
  const auto path = temporary_folder("corrupt-alone") / "run.ckpt";
  Trainer trainer(model_with_seed(0), resumable_options(4));
  trainer.save_checkpoint(path);
  REQUIRE_FALSE(std::filesystem::exists(path.string() + ".bak"));
  truncate_to_half(path);
  Trainer restarted(model_with_seed(1), resumable_options(4));
  const auto before = restorable_state(restarted);
  CHECK_THROWS_AS(restarted.load_checkpoint(path), g2c::ValueError);
  CHECK_THROWS_WITH(restarted.load_checkpoint(path), Contains("cannot read checkpoint") &&
                                                         Contains(path.string()) &&
                                                         Contains("no " + path.string() + ".bak"));
  CHECK_THROWS_WITH(g2c::pretraining::read_checkpoint(path), Contains("cannot read checkpoint"));
  const auto after = restorable_state(restarted);
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(torch::equal(before[i], after[i]));
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("refused_checkpoint_leaves_the_trainer_as_it_was", "[checkpoint]") {
  // A checkpoint whose model parameters fit but whose optimizer or generator state does not: the
  // parameters come first in the file, and must not be copied before the rest has been checked.
  const auto damage =
      GENERATE(as<std::string>{}, "adamw_m shape", "adamw_v dtype", "generator_state size");
  INFO("damaged: " << damage);
  const auto path = temporary_folder("refused") / "run.ckpt";
  Trainer trainer(model_with_seed(0), resumable_options(4));
  torch::manual_seed(3);
  trainer.train(torch::randint(0, 12, {200}, torch::kLong));  // moments and generator in use
  trainer.save_checkpoint(path);

  const std::string bytes = g2c::read_file(path);
  auto dict = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
  const auto name = damage.substr(0, damage.find(' '));
  if (name == "generator_state") {
    dict.insert_or_assign(name, torch::zeros({3}, torch::kUInt8));
  } else {
    auto moments = dict.at(name).toList();
    const auto last = moments.get(moments.size() - 1).toTensor();
    moments.set(moments.size() - 1, damage.ends_with("shape") ? torch::zeros({last.numel() + 1})
                                                              : last.to(torch::kLong));
  }
  g2c::write_archive(path, dict);

  Trainer restarted(model_with_seed(1), resumable_options(4).max_lr(0.5));
  const auto before = restorable_state(restarted);
  CHECK_THROWS_AS(restarted.load_checkpoint(path), g2c::ValueError);
  try {
    restarted.load_checkpoint(path);
  } catch (const g2c::ValueError& error) {
    std::cout << damage << ": " << error.what() << "\n";
  }
  const auto after = restorable_state(restarted);
  REQUIRE(before.size() == after.size());
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(torch::equal(before[i], after[i]));
  CHECK(restarted.step == 0);
  CHECK(restarted.optimizer->lr == 0.5);
  CHECK(dynamic_cast<const g2c::nn::AdamW&>(*restarted.optimizer).step_count == 0);
  std::filesystem::remove_all(path.parent_path());
}
