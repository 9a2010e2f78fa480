// Module 15 — the multiple-choice harness (provided): score every example and aggregate.
#include <numeric>

#include "g2c/core/errors.h"
#include "g2c/eval/calibration.h"
#include "g2c/eval/multiple_choice.h"

namespace g2c::eval {

EvalReport run_multiple_choice_eval(g2c::nn::Module& model, const g2c::sft::TokenEncoder& tokenizer,
                                    const std::vector<MultipleChoiceExample>& examples,
                                    const MultipleChoiceEvalOptions& options) {
  if (examples.empty()) {
    throw ValueError("run_multiple_choice_eval needs at least one example; got an empty list");
  }
  // A measurement runs without dropout; the caller's mode comes back even when scoring throws.
  struct ModeGuard {
    g2c::nn::Module& model;
    bool was_training;
    ~ModeGuard() { model.train(was_training); }
  } mode_guard{model, model.is_training()};
  model.eval();

  EvalReport report;
  report.task_name = options.task_name();
  std::int64_t n_correct = 0;
  std::vector<double> confidences;
  std::vector<bool> correct;
  for (const auto& example : examples) {
    report.results.push_back(
        score_multiple_choice(model, tokenizer, example, options.length_normalize()));
    const auto& result = report.results.back();
    n_correct += result.correct ? 1 : 0;
    if (result.confidence) {
      confidences.push_back(*result.confidence);
      correct.push_back(result.correct);
    }
  }
  report.n = static_cast<std::int64_t>(report.results.size());
  report.accuracy = static_cast<double>(n_correct) / static_cast<double>(report.n);
  if (!confidences.empty()) {
    report.mean_confidence = std::accumulate(confidences.begin(), confidences.end(), 0.0) /
                             static_cast<double>(confidences.size());
  }
  // ECE only over a complete set of confidences: a partial one would describe another sample.
  if (options.compute_ece() && static_cast<std::int64_t>(confidences.size()) == report.n) {
    report.ece = expected_calibration_error(confidences, correct, options.ece_n_bins());
  }
  return report;
}

}  // namespace g2c::eval
