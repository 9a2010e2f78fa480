// Module 20 — a regression gate for the assistant, and the bare model's score on the same cases.
//
// After a change (a prompt, a config, a model), did the assistant still do the basic things?
//
//   std::vector<EvalCase> cases = {
//       EvalCase("sum", "What is 2+2?", {.expected_answer = {"4"}, .expected_tool = "calculator"}),
//       EvalCase("capital", "Capital of Spain?", {.expected_answer = {"Madrid"}})};
//   const auto report = run_evaluation(assistant, cases);
//   report.summary()   -> "AssistantEvalReport: 2/2 passed (100.0%)"
//
// A case passes when every check it asks for passes, the first failing one giving the reason:
//   an answer at all       the run must have ended with a final answer (a run that ran out of
//                          steps fails even if the right words appear in some step)
//   expected_answer        the final answer satisfies the case's matcher against these
//                          references: by default module 15's contains_match (the reference
//                          occurs in the answer, case ignored), or any other module 15 matcher
//   expected_tool          some step of the run called this tool
//
// A gate, not a benchmark: pass/fail over named behaviours. run_capability_baseline asks the bare
// model the same questions (no system prompt, tools, context or loop) and scores it as module 15
// scores generation: run both and the difference is what the scaffolding bought — and a negative
// difference means retrieval, a tool or the loop talked the model out of a right answer.
//
// The matchers are module 15's (g2c/eval/match.h), which live in the course library: this part of
// the assistant is the one that links it (g2c/assistant/CMakeLists.txt). Provided.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "g2c/assistant/assistant.h"
#include "g2c/eval/data.h"
#include "g2c/eval/generation.h"
#include "g2c/inference/backend.h"

namespace g2c::assistant {

/// An EvalCase's optional checks, by the Python edition's keyword names.
struct EvalCaseOptions {
  /// The accepted answers (any one may match); empty: no answer check.
  std::vector<std::string> expected_answer = {};
  /// A module 15 matcher, (prediction, references) -> matched; empty: eval::contains_match.
  eval::MatchFn matcher = nullptr;
  /// How reports name the matcher; "": its module 15 name ("contains_match", …), "custom" for a
  /// matcher of your own.
  std::string matcher_name = "";
  /// A tool some step must have called; nullopt: no tool check.
  std::optional<std::string> expected_tool = std::nullopt;
  /// This case's override of config.rag_enabled; nullopt: the config decides.
  std::optional<bool> rag = std::nullopt;
};

/// One named behaviour to check. A value, fixed once made (getters, no setters).
class EvalCase {
 public:
  /// ValueError for an empty name ("EvalCase: name must be a non-empty string") or question, and
  /// for an empty reference among options.expected_answer.
  EvalCase(std::string name, std::string question, EvalCaseOptions options = {});

  const std::string& name() const { return name_; }
  const std::string& question() const { return question_; }
  const std::vector<std::string>& expected_answer() const { return options_.expected_answer; }
  /// The references a matcher is given: expected_answer itself.
  const std::vector<std::string>& references() const { return options_.expected_answer; }
  /// The matcher given; empty when the default applies.
  const eval::MatchFn& matcher() const { return options_.matcher; }
  const std::optional<std::string>& expected_tool() const { return options_.expected_tool; }
  const std::optional<bool>& rag() const { return options_.rag; }

  /// The matcher this case scores with: the one given, else eval::contains_match.
  eval::MatchFn resolve_matcher() const;
  /// Its name in reports: options.matcher_name, else the module 15 name of the resolved matcher
  /// ("contains_match" for the default), else "custom".
  std::string matcher_name() const;

 private:
  std::string name_;
  std::string question_;
  EvalCaseOptions options_;
};

/// One case's outcome.
struct EvalCaseResult {
  EvalCase eval_case;                         // the case (the Python edition's `case`)
  bool passed = false;                        // every check it asks for passed
  std::optional<std::string> final_answer;    // the turn's answer; nullopt without one
  std::optional<std::string> failure_reason;  // the first failing check; nullopt when passed
  AssistantTurn turn;                         // the whole turn, for a closer look
};

/// The results of a run of cases, in the order they ran.
struct AssistantEvalReport {
  std::vector<EvalCaseResult> results = {};

  std::size_t n_total() const { return results.size(); }
  std::size_t n_passed() const;
  std::size_t n_failed() const { return n_total() - n_passed(); }
  /// n_passed / n_total; 0 for no results.
  double pass_rate() const;
  /// The failed results, in order.
  std::vector<EvalCaseResult> failures() const;
  /// "AssistantEvalReport: 1/2 passed (50.0%)".
  std::string summary() const;
};

/// Each case through assistant.chat(question, case.rag()), checked as the top of this file says,
/// in order. reset_each: reset() before each case, so that cases cannot leak into one another
/// (false: they share one conversation, for multi-turn suites). Exceptions from chat (a broken
/// retriever) propagate: a gate that fails loudly on a broken setup, not a fault-tolerant runner.
AssistantEvalReport run_evaluation(Assistant& assistant, const std::vector<EvalCase>& cases,
                                   bool reset_each = true);

/// run_capability_baseline's settings, by the Python edition's names.
struct CapabilityBaselineOptions {
  std::int64_t max_new_tokens = 256;  // per question
  double temperature = 0.0;           // greedy, so that the baseline is reproducible
  std::string task_name = "capability-baseline";
};

/// The bare model's score on the same cases: each case that has an expected_answer, its question
/// sent to backend.complete() as it is, scored with the case's matcher (module 15's
/// score_generation_example). Returns module 15's EvalReport — a capability measurement, printed
/// and saved as module 15's benchmarks are (no confidence, so ece and mean_confidence are none).
/// Pass assistant.backend() to hold the model fixed and remove only the scaffolding. ValueError
/// when no case has an expected_answer (a tool-only case has nothing to score without a loop).
eval::EvalReport run_capability_baseline(inference::Backend& backend,
                                         const std::vector<EvalCase>& cases,
                                         const CapabilityBaselineOptions& options = {});

}  // namespace g2c::assistant
