// What exercise 15 measures, kept apart from how it reports it: the held-out items turned into
// evaluation examples, one model's reports, and the comparison of two models on the same items.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/proportion.h"
#include "exercises/common/tasks.h"
#include "g2c/eval/eval.h"

namespace g2c::exercises {

/// Speaker attribution as multiple choice: the item's prompt rendered as the chat template's
/// generation prompt, its speaker and three other speakers of the task, in a random order (chance
/// 25 %). Deterministic with `seed`. metadata: {"offset", "answer"}.
std::vector<g2c::eval::MultipleChoiceExample> speaker_choices(
    const std::vector<TaskItem>& items, const std::vector<std::string>& speakers,
    std::uint64_t seed);

/// The items as generation examples (the user message; the answer is the one reference).
std::vector<g2c::eval::GenerationExample> generation_examples(const std::vector<TaskItem>& items);

/// One model's results on every task.
struct ModelEval {
  std::string name;
  nlohmann::json manifest;                     // the artifact's manifest (lineage: base_artifact)
  std::vector<g2c::eval::EvalReport> reports;  // in the order of the tasks
  // Per completion reply: does it repeat one word (repeats_one_word)? The degenerate replies
  // module 14's repetition pairs push down.
  std::vector<bool> repetitive;
  g2c::eval::ReliabilityCurve reliability;  // of the raw multiple-choice confidences
  double seconds = 0.0;
};

/// The manifest's base_artifact (the model it was tuned from), read as every manifest reader reads
/// it (g2c::pretraining::read_manifest_summary); "" for a base model (absent or null).
std::string base_artifact_of(const nlohmann::json& manifest);

/// The artifacts under models_root() whose manifests name `parent` as their base_artifact (the
/// models tuned from it), sorted by name; a folder without a readable manifest is skipped.
std::vector<std::string> tuned_from(const std::string& parent);

/// Accuracy with its 95 % Wilson interval, from a report.
Proportion accuracy_of(const g2c::eval::EvalReport& report);

/// The change of accuracy from `before` to `after` on the same items: the mean of the per-item
/// differences with its 95 % interval (paired, normal approximation).
struct Change {
  double difference = 0.0, low = 0.0, high = 0.0;
  bool significant() const { return low > 0.0 || high < 0.0; }
  nlohmann::json to_json() const;
};
Change paired_change(const std::vector<bool>& before, const std::vector<bool>& after);
/// The same for the `correct` of two reports on the same items.
Change paired_change(const g2c::eval::EvalReport& before, const g2c::eval::EvalReport& after);

/// A degenerate reply: at least three words, one of which (letters and apostrophes, any case) is
/// at least half of them. Example: "the the will the he" -> true; "the cold," -> false.
bool repeats_one_word(const std::string& reply);

/// Writes artifacts/evals/<name>/{runs.jsonl, summary.md, failure_cases.md} (each atomically) and
/// returns the folder. `notes`: lines for the summary's end (how the items were made).
std::filesystem::path write_eval_artifact(const std::string& name,
                                          const std::vector<ModelEval>& models,
                                          const std::vector<std::string>& notes);

}  // namespace g2c::exercises
