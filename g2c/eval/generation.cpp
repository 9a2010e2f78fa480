// Module 15 — the generation harness (provided): generate, match, aggregate.
#include "g2c/eval/generation.h"

#include <utility>

#include "g2c/core/errors.h"

namespace g2c::eval {

namespace {

using MatchPointer = bool (*)(const std::string&, const std::vector<std::string>&);

}  // namespace

std::string matcher_name_of(const MatchFn& match) {
  // A course matcher passed by name is stored as a plain function pointer; a lambda is not.
  if (const auto* pointer = match.target<MatchPointer>()) {
    if (*pointer == &exact_match) return "exact_match";
    if (*pointer == &normalized_match) return "normalized_match";
    if (*pointer == &contains_match) return "contains_match";
  }
  return "custom";
}

EvalResult score_generation_example(const GenerateFn& generate, const GenerationExample& example,
                                    const MatchFn& match, const std::string& matcher_name) {
  if (!generate || !match) {
    throw ValueError("score_generation_example needs a generate function and a matcher");
  }
  EvalResult result;
  result.prediction = generate(example.prompt());
  result.correct = match(result.prediction, example.references());
  result.metadata = {{"references", example.references()},
                     {"matcher", matcher_name.empty() ? matcher_name_of(match) : matcher_name}};
  return result;
}

EvalReport run_generation_eval(const GenerateFn& generate,
                               const std::vector<GenerationExample>& examples, const MatchFn& match,
                               const std::string& task_name, const std::string& matcher_name) {
  if (examples.empty()) {
    throw ValueError("run_generation_eval needs at least one example; got an empty list");
  }
  EvalReport report;
  report.task_name = task_name;
  std::int64_t n_correct = 0;
  for (const auto& example : examples) {
    report.results.push_back(score_generation_example(generate, example, match, matcher_name));
    n_correct += report.results.back().correct ? 1 : 0;
  }
  report.n = static_cast<std::int64_t>(report.results.size());
  report.accuracy = static_cast<double>(n_correct) / static_cast<double>(report.n);
  return report;
}

}  // namespace g2c::eval
