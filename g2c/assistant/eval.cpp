// Module 20 — the assistant's regression gate and the bare model's baseline (eval.h).
#include "g2c/assistant/eval.h"

#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/eval/match.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::assistant {

EvalCase::EvalCase(std::string name, std::string question, EvalCaseOptions options)
    : name_(std::move(name)), question_(std::move(question)), options_(std::move(options)) {
  if (name_.empty()) {
    throw ValueError("EvalCase: name must be a non-empty string (it names the case in reports)");
  }
  if (question_.empty()) {
    throw ValueError(fmt::format(
        "EvalCase {}: question must be a non-empty string (what the assistant is asked)",
        g2c::tokenizer::python_repr(name_)));
  }
  for (const auto& reference : options_.expected_answer) {
    if (reference.empty()) {
      throw ValueError(fmt::format(
          "EvalCase {}: expected_answer holds an empty reference, which every answer contains; "
          "leave expected_answer empty for no answer check",
          g2c::tokenizer::python_repr(name_)));
    }
  }
}

eval::MatchFn EvalCase::resolve_matcher() const {
  return options_.matcher ? options_.matcher : eval::MatchFn(eval::contains_match);
}

std::string EvalCase::matcher_name() const {
  if (!options_.matcher_name.empty()) return options_.matcher_name;
  return eval::matcher_name_of(resolve_matcher());
}

std::size_t AssistantEvalReport::n_passed() const {
  std::size_t passed = 0;
  for (const auto& result : results) passed += result.passed ? 1 : 0;
  return passed;
}

double AssistantEvalReport::pass_rate() const {
  return results.empty() ? 0.0 : static_cast<double>(n_passed()) / static_cast<double>(n_total());
}

std::vector<EvalCaseResult> AssistantEvalReport::failures() const {
  std::vector<EvalCaseResult> failed;
  for (const auto& result : results) {
    if (!result.passed) failed.push_back(result);
  }
  return failed;
}

std::string AssistantEvalReport::summary() const {
  return fmt::format("AssistantEvalReport: {}/{} passed ({:.1f}%)", n_passed(), n_total(),
                     100.0 * pass_rate());
}

namespace {

/// The first failing check's reason; nullopt when every check passed.
std::optional<std::string> failed_check(const EvalCase& eval_case, const AssistantTurn& turn) {
  if (!turn.final_answer) {
    return fmt::format("no final_answer (stopped: {})", turn.agent_run.stopped_reason);
  }
  if (!eval_case.references().empty() &&
      !eval_case.resolve_matcher()(*turn.final_answer, eval_case.references())) {
    std::vector<std::string> shown;
    for (const auto& reference : eval_case.references()) {
      shown.push_back(g2c::tokenizer::python_repr(reference));
    }
    return fmt::format("final_answer failed {} against [{}]", eval_case.matcher_name(),
                       fmt::join(shown, ", "));
  }
  if (eval_case.expected_tool()) {
    std::set<std::string> called;  // sorted, as the Python edition lists them
    for (const auto& step : turn.agent_run.steps) {
      if (step.action) called.insert(step.action->tool());
    }
    if (!called.contains(*eval_case.expected_tool())) {
      std::vector<std::string> shown;
      for (const auto& tool : called) shown.push_back(g2c::tokenizer::python_repr(tool));
      return fmt::format("expected tool {} not called (called: [{}])",
                         g2c::tokenizer::python_repr(*eval_case.expected_tool()),
                         fmt::join(shown, ", "));
    }
  }
  return std::nullopt;
}

}  // namespace

AssistantEvalReport run_evaluation(Assistant& assistant, const std::vector<EvalCase>& cases,
                                   bool reset_each) {
  AssistantEvalReport report;
  for (const auto& eval_case : cases) {
    if (reset_each) assistant.reset();
    auto turn = assistant.chat(eval_case.question(), eval_case.rag());
    auto reason = failed_check(eval_case, turn);
    const bool passed = !reason.has_value();
    auto final_answer = turn.final_answer;
    report.results.push_back(
        {eval_case, passed, std::move(final_answer), std::move(reason), std::move(turn)});
  }
  return report;
}

eval::EvalReport run_capability_baseline(inference::Backend& backend,
                                         const std::vector<EvalCase>& cases,
                                         const CapabilityBaselineOptions& options) {
  const auto sampling = inference::CompletionOptions()
                            .with_max_new_tokens(options.max_new_tokens)
                            .with_temperature(options.temperature);
  const eval::GenerateFn generate = [&](const std::string& prompt) {
    return backend.complete(prompt, sampling).completion;
  };
  eval::EvalReport report;
  report.task_name = options.task_name;
  std::int64_t correct = 0;
  for (const auto& eval_case : cases) {
    if (eval_case.references().empty()) continue;  // a tool-only case: nothing to score here
    report.results.push_back(eval::score_generation_example(
        generate, eval::GenerationExample(eval_case.question(), eval_case.references()),
        eval_case.resolve_matcher(), eval_case.matcher_name()));
    correct += report.results.back().correct ? 1 : 0;
  }
  if (report.results.empty()) {
    throw ValueError(
        "run_capability_baseline needs at least one case with an expected_answer; tool-only "
        "cases have nothing to score without an agent loop (give a case expected_answer)");
  }
  report.n = static_cast<std::int64_t>(report.results.size());
  report.accuracy = static_cast<double>(correct) / static_cast<double>(report.n);
  return report;  // ece and mean_confidence stay none: generation has no confidence
}

}  // namespace g2c::assistant
