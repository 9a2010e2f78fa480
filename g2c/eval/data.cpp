// Module 15 — examples and reports (provided): the examples' checks, printing and JSON.
#include "g2c/eval/data.h"

#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::eval {

namespace {

void check_metadata(const nlohmann::json& metadata, const char* who) {
  if (!metadata.is_object()) {
    throw ValueError(
        fmt::format("{}: metadata must be a JSON object (nlohmann::json::object()), "
                    "got a JSON {}",
                    who, metadata.type_name()));
  }
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string optional_text(const std::optional<double>& value) {
  return value ? fmt::format("{:.4f}", *value) : std::string("—");
}

}  // namespace

MultipleChoiceExample::MultipleChoiceExample(std::string prompt, std::vector<std::string> choices,
                                             std::int64_t answer_idx, nlohmann::json metadata)
    : prompt_(std::move(prompt)),
      choices_(std::move(choices)),
      answer_idx_(answer_idx),
      metadata_(std::move(metadata)) {
  const auto n = static_cast<std::int64_t>(choices_.size());
  if (n < 2) {
    throw ValueError(fmt::format(
        "MultipleChoiceExample needs at least 2 choices, got {}: a question with one option "
        "measures nothing; add the distractors",
        n));
  }
  if (answer_idx_ < 0 || answer_idx_ >= n) {
    throw ValueError(fmt::format(
        "MultipleChoiceExample: answer_idx={} is out of range for {} choices; it must index the "
        "correct choice, 0 … {}",
        answer_idx_, n, n - 1));
  }
  check_metadata(metadata_, "MultipleChoiceExample");
}

GenerationExample::GenerationExample(std::string prompt, std::vector<std::string> references,
                                     nlohmann::json metadata)
    : prompt_(std::move(prompt)),
      references_(std::move(references)),
      metadata_(std::move(metadata)) {
  if (references_.empty()) {
    throw ValueError(
        "GenerationExample needs at least 1 reference answer: with none, no generation could ever "
        "be correct; list every accepted answer");
  }
  check_metadata(metadata_, "GenerationExample");
}

nlohmann::json EvalResult::to_json() const {
  return {{"prediction", prediction},
          {"correct", correct},
          {"confidence", optional_json(confidence)},
          {"metadata", metadata},
          {"choice_idx", choice_idx ? nlohmann::json(*choice_idx) : nlohmann::json(nullptr)}};
}

std::string EvalReport::to_string() const {
  return fmt::format("EvalReport(task='{}', n={}, accuracy={:.4f}, mean_confidence={}, ece={})",
                     task_name, n, accuracy, optional_text(mean_confidence), optional_text(ece));
}

nlohmann::json EvalReport::to_json() const {
  auto rows = nlohmann::json::array();
  for (const auto& result : results) rows.push_back(result.to_json());
  return {{"task_name", task_name},    {"n", n},
          {"accuracy", accuracy},      {"mean_confidence", optional_json(mean_confidence)},
          {"ece", optional_json(ece)}, {"results", std::move(rows)}};
}

std::ostream& operator<<(std::ostream& os, const EvalReport& report) {
  return os << report.to_string();
}

}  // namespace g2c::eval
