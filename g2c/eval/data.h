// Module 15 — what an evaluation reads and what it writes down.
//
// Every task of the module is one of two kinds:
//   multiple choice  a prompt and N >= 2 candidate continuations, one of them right. The model
//                    "answers" with the continuation it finds most probable; closed set, no
//                    sampling, and the scores give a confidence for calibration.
//   generation       a prompt and the acceptable answers. The model writes freely and a matcher
//                    (match.h) decides whether the text matches any of them; open set.
// Factual questions, arithmetic and instruction following differ only in the matcher, so one
// harness serves them all.
//
// The examples check themselves when built: a question with one choice, a gold index outside the
// choices or a question with no acceptable answer would otherwise surface three calls later as a
// silent 0 % accuracy. They are values, read-only once built (accessors, no setters), like the
// Python edition's frozen dataclasses.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::eval {

/// One closed-set question. The prompt is used as given (render any chat template first, e.g.
/// ChatTemplate::generation_prompt); each choice is appended to it with no separator and scored.
/// metadata: anything the caller wants to carry along (speaker, source line, ...), a JSON object.
/// ValueError for fewer than 2 choices or an answer_idx outside [0, choices.size()).
/// Example: MultipleChoiceExample("Q: capital of Spain?", {"Madrid", "Lisbon"}, 0).
class MultipleChoiceExample {
 public:
  MultipleChoiceExample(std::string prompt, std::vector<std::string> choices,
                        std::int64_t answer_idx,
                        nlohmann::json metadata = nlohmann::json::object());

  const std::string& prompt() const { return prompt_; }
  const std::vector<std::string>& choices() const { return choices_; }
  std::int64_t answer_idx() const { return answer_idx_; }
  const nlohmann::json& metadata() const { return metadata_; }

  bool operator==(const MultipleChoiceExample&) const = default;

 private:
  std::string prompt_;
  std::vector<std::string> choices_;
  std::int64_t answer_idx_;
  nlohmann::json metadata_;
};

/// One open-set question: the prompt and every answer accepted (surface variants such as
/// "Madrid" / "the capital is Madrid" are the matcher's job; genuinely different answers go here).
/// ValueError for no references.
/// Example: GenerationExample("Q: capital of Spain?", {"Madrid"}).
class GenerationExample {
 public:
  GenerationExample(std::string prompt, std::vector<std::string> references,
                    nlohmann::json metadata = nlohmann::json::object());

  const std::string& prompt() const { return prompt_; }
  const std::vector<std::string>& references() const { return references_; }
  const nlohmann::json& metadata() const { return metadata_; }

  bool operator==(const GenerationExample&) const = default;

 private:
  std::string prompt_;
  std::vector<std::string> references_;
  nlohmann::json metadata_;
};

/// The record of one scored example. Mutable on purpose (a caller may add e.g. a latency to
/// metadata afterwards). Built field by field (a designated initialiser that leaves fields out
/// draws -Wmissing-field-initializers from GCC 12):
///   EvalResult r; r.prediction = "yes"; r.correct = true;
/// prediction: the text the model chose (multiple choice: the chosen choice's text) or wrote
///             (generation).
/// confidence: multiple choice: the softmax probability of the chosen option over all options;
///             generation: none.
/// metadata:   multiple choice: "option_logps", "option_lengths", "option_scores", "gold_idx";
///             generation: "references", "matcher".
/// choice_idx: multiple choice: the chosen option's index (what the Python edition stores as its
///             prediction); generation: none.
struct EvalResult {
  std::string prediction;
  bool correct = false;
  std::optional<double> confidence;
  nlohmann::json metadata = nlohmann::json::object();
  std::optional<std::int64_t> choice_idx;

  /// {"prediction", "correct", "confidence" (null when none), "metadata", "choice_idx" (null when
  /// none)}: one line of runs.jsonl.
  nlohmann::json to_json() const;
};

/// The aggregate over a task. n == results.size() always (nothing is dropped: an example that
/// cannot be scored throws). accuracy and mean_confidence are different things: a model that is
/// always 99 % sure and right half the time has 0.5 and 0.99, and ECE measures the gap.
/// mean_confidence: the mean over the results that have a confidence, none when none has.
/// ece: expected calibration error (calibration.h), none when not computed (generation tasks,
///      compute_ece(false)).
struct EvalReport {
  std::string task_name;
  std::vector<EvalResult> results;
  double accuracy = 0.0;
  std::int64_t n = 0;
  std::optional<double> ece;
  std::optional<double> mean_confidence;

  /// Example: "EvalReport(task='qa', n=10, accuracy=0.8000, mean_confidence=0.7000, ece=0.0500)";
  /// "—" for a missing mean_confidence or ece.
  std::string to_string() const;

  /// {"task_name", "n", "accuracy", "mean_confidence", "ece" (null when none), "results": [...]}.
  nlohmann::json to_json() const;
};

std::ostream& operator<<(std::ostream& os, const EvalReport& report);

}  // namespace g2c::eval
