// The progress line and the divergence stop of every exercise that trains through a Trainer
// (10_pretrain, 12_scaling, 13_sft, 13b_lora, 14_dpo): one logger, one exit status.
//
// clang-format off
//   g2c::exercises::RunLog log({.label = "pretraining", .steps = 1000, .advice = "Try a lower --lr."});
//   trainer.train(val_ids, RunOptions().on_log(log.callback()));
//   log.finish();
// clang-format on
//
// Each logged step moves the bar and shows "loss 2.913 lr 3.00e-04 9143 tok/s val 2.871" (tok/s
// when tokens_per_step is set, val when the step evaluated). The first loss that is not finite
// stops the run with g2c::TrainingDiverged — exit status 4 (g2c/core/cli.h) — naming the run, the
// step, the lr and the gradient norm, then the advice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "g2c/core/progress.h"
#include "g2c/pretraining/trainer.h"

namespace g2c::exercises {

struct RunLogOptions {
  std::string label;                 // the bar's label and the error's subject, e.g. "pretraining"
  std::int64_t steps = 0;            // the step the run ends at (Trainer::step counts to it)
  std::int64_t first_step = 0;       // where this run starts (a resumed run: the checkpoint's step)
  std::int64_t tokens_per_step = 0;  // B · T, for tokens/s; 0 shows none
  bool show = true;                  // false: no progress line (--quiet)
  std::string advice;                // what to try when the loss diverges
};

class RunLog {
 public:
  explicit RunLog(RunLogOptions options);

  /// The Trainer's on_log: the bar moves, or TrainingDiverged at a loss that is not finite.
  std::function<void(const g2c::pretraining::LogEvent&)> callback();

  /// Ends the bar (nothing when no step was logged: a run stopped by a TODO draws no bar).
  void finish();

 private:
  void log(const g2c::pretraining::LogEvent& event);

  RunLogOptions options_;
  // Made at the first event: its clock starts after the first step, so the first rate is not one
  // step over no time.
  std::optional<g2c::Progress> progress_;
};

}  // namespace g2c::exercises
