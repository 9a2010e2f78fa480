#include "exercises/15-eval/evals.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sft/chat_template.h"

namespace g2c::exercises {

std::vector<g2c::eval::MultipleChoiceExample> speaker_choices(
    const std::vector<TaskItem>& items, const std::vector<std::string>& speakers,
    std::uint64_t seed) {
  if (speakers.size() < 4) {
    throw ValueError(fmt::format(
        "speaker_choices: four choices need four speakers, the task has {}", speakers.size()));
  }
  std::mt19937_64 rng(seed);
  const g2c::sft::ChatTemplate chat;
  std::vector<g2c::eval::MultipleChoiceExample> examples;
  for (const auto& item : items) {
    std::vector<std::string> choices = {item.answer};
    while (choices.size() < 4) {
      const auto& other = speakers[rng() % speakers.size()];
      if (std::find(choices.begin(), choices.end(), other) == choices.end()) {
        choices.push_back(other);
      }
    }
    std::shuffle(choices.begin(), choices.end(), rng);
    const auto answer_idx =
        std::find(choices.begin(), choices.end(), item.answer) - choices.begin();
    examples.emplace_back(
        chat.generation_prompt({{"user", item.prompt}}), std::move(choices), answer_idx,
        nlohmann::json{
            {"offset", item.offset}, {"question", item.prompt}, {"answer", item.answer}});
  }
  return examples;
}

std::vector<g2c::eval::GenerationExample> generation_examples(const std::vector<TaskItem>& items) {
  std::vector<g2c::eval::GenerationExample> examples;
  for (const auto& item : items) {
    examples.emplace_back(item.prompt, std::vector<std::string>{item.answer},
                          nlohmann::json{{"offset", item.offset}, {"question", item.prompt}});
  }
  return examples;
}

std::string base_artifact_of(const nlohmann::json& manifest) {
  return g2c::pretraining::read_manifest_summary(manifest, "manifest.json")
      .base_artifact.value_or("");
}

std::vector<std::string> tuned_from(const std::string& parent) {
  namespace fs = std::filesystem;
  std::vector<std::string> children;
  const auto root = g2c::pretraining::models_root();
  std::error_code error;
  if (!fs::is_directory(root, error)) return children;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    const auto manifest_file = entry.path() / "manifest.json";
    if (!entry.is_directory() || !fs::is_regular_file(manifest_file)) continue;
    try {
      if (base_artifact_of(nlohmann::json::parse(g2c::read_file(manifest_file))) == parent) {
        children.push_back(entry.path().filename().string());
      }
    } catch (const std::exception&) {
      // Not a readable manifest: not an artifact this lineage can follow.
    }
  }
  std::sort(children.begin(), children.end());
  return children;
}

Proportion accuracy_of(const g2c::eval::EvalReport& report) {
  Proportion p;
  p.total = static_cast<std::int64_t>(report.results.size());
  for (const auto& result : report.results) p.hits += result.correct;
  return p;
}

nlohmann::json Change::to_json() const {
  return {{"difference", difference}, {"ci95", {low, high}}, {"significant", significant()}};
}

Change paired_change(const std::vector<bool>& before, const std::vector<bool>& after) {
  if (before.size() != after.size() || before.empty()) {
    throw ValueError(
        fmt::format("paired_change: both sides must score the same items ({} and {} results)",
                    before.size(), after.size()));
  }
  const auto n = static_cast<double>(before.size());
  double sum = 0.0, sum_sq = 0.0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const double d = static_cast<double>(after[i]) - static_cast<double>(before[i]);
    sum += d;
    sum_sq += d * d;
  }
  const double mean = sum / n;
  const double variance = n > 1 ? std::max(0.0, (sum_sq - n * mean * mean) / (n - 1)) : 0.0;
  const double half = 1.96 * std::sqrt(variance / n);
  return {mean, mean - half, mean + half};
}

Change paired_change(const g2c::eval::EvalReport& before, const g2c::eval::EvalReport& after) {
  const auto correct = [](const g2c::eval::EvalReport& report) {
    std::vector<bool> out;
    for (const auto& result : report.results) out.push_back(result.correct);
    return out;
  };
  return paired_change(correct(before), correct(after));
}

bool repeats_one_word(const std::string& reply) {
  std::map<std::string, std::int64_t> counts;
  std::int64_t words = 0;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) counts[word] += 1, words += 1;
    word.clear();
  };
  for (const char c : reply) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u) || c == '\'') {
      word += static_cast<char>(std::tolower(u));
    } else {
      flush();
    }
  }
  flush();
  if (words < 3) return false;
  std::int64_t most = 0;
  for (const auto& [w, count] : counts) most = std::max(most, count);
  return 2 * most >= words;
}

namespace {

// A table cell must not break the table: no newlines, no pipes.
std::string cell(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string question_of(const g2c::eval::EvalResult& result, const nlohmann::json& example_meta) {
  if (example_meta.contains("question")) return example_meta["question"].get<std::string>();
  return result.metadata.value("prompt", "");
}

}  // namespace

std::filesystem::path write_eval_artifact(const std::string& name,
                                          const std::vector<ModelEval>& models,
                                          const std::vector<std::string>& notes) {
  if (models.empty()) throw ValueError("write_eval_artifact: no model was evaluated");
  const auto folder = g2c::pretraining::models_root().parent_path() / "evals" / name;
  std::filesystem::create_directories(folder);

  // runs.jsonl: one line per model, task and item.
  std::string runs;
  for (const auto& model : models) {
    for (const auto& report : model.reports) {
      for (std::size_t i = 0; i < report.results.size(); ++i) {
        auto line = report.results[i].to_json();
        line["model"] = model.name;
        line["task"] = report.task_name;
        line["index"] = i;
        runs += line.dump() + "\n";
      }
    }
  }
  write_file_atomic(folder / "runs.jsonl", runs);

  // summary.md: accuracy with intervals per model and task, then the changes along the lineage.
  std::string summary = fmt::format("# Evaluation `{}`\n\n", name);
  summary += "| model | tuned from |";
  for (const auto& report : models.front().reports)
    summary += fmt::format(" {} |", report.task_name);
  summary += " ECE (multiple choice, raw) |\n|---|---|";
  for (std::size_t t = 0; t < models.front().reports.size(); ++t) summary += "---|";
  summary += "---|\n";
  for (const auto& model : models) {
    summary +=
        fmt::format("| {} | {} |", model.name,
                    base_artifact_of(model.manifest).empty() ? std::string("—")
                                                             : base_artifact_of(model.manifest));
    for (const auto& report : model.reports) {
      summary += fmt::format(" {} |", accuracy_of(report).to_string());
    }
    const auto& first = model.reports.front();
    summary += first.ece ? fmt::format(" {:.3f} |\n", *first.ece) : std::string(" — |\n");
  }
  summary += "\nAccuracy on held-out items with its 95 % (Wilson) interval.\n";

  bool any_change = false;
  std::string changes =
      "\n## Did tuning change held-out accuracy?\n\nEach tuned model against the model it was "
      "tuned from, on the same items: the difference of accuracy in percentage points with its 95 "
      "% interval (paired).\n\n| change | task | difference | verdict |\n|---|---|---|---|\n";
  for (const auto& child : models) {
    const auto parent_name = base_artifact_of(child.manifest);
    const auto parent = std::find_if(models.begin(), models.end(),
                                     [&](const ModelEval& m) { return m.name == parent_name; });
    if (parent_name.empty() || parent == models.end()) continue;
    any_change = true;
    for (std::size_t t = 0; t < child.reports.size(); ++t) {
      const auto change = paired_change(parent->reports[t], child.reports[t]);
      changes += fmt::format("| {} → {} | {} | {:+.1f} [{:+.1f}, {:+.1f}] | {} |\n", parent->name,
                             child.name, child.reports[t].task_name, 100 * change.difference,
                             100 * change.low, 100 * change.high,
                             change.significant() ? (change.difference > 0 ? "better" : "worse")
                                                  : "no significant change");
    }
  }
  if (any_change) summary += changes;

  // Degenerate repetition, what module 14's repetition pairs push down.
  summary +=
      "\n## Degenerate replies\n\nCompletion replies in which one word is at least half of "
      "the words (three or more):\n\n| model | repetitive replies | change from the model it was "
      "tuned from |\n|---|---|---|\n";
  for (const auto& model : models) {
    Proportion repetitive;
    repetitive.total = static_cast<std::int64_t>(model.repetitive.size());
    for (const bool r : model.repetitive) repetitive.hits += r;
    const auto parent_name = base_artifact_of(model.manifest);
    const auto parent = std::find_if(models.begin(), models.end(),
                                     [&](const ModelEval& m) { return m.name == parent_name; });
    std::string change = "—";
    if (!parent_name.empty() && parent != models.end()) {
      const auto d = paired_change(parent->repetitive, model.repetitive);
      change = fmt::format(
          "{:+.1f} [{:+.1f}, {:+.1f}] ({})", 100 * d.difference, 100 * d.low, 100 * d.high,
          d.significant() ? (d.difference < 0 ? "fewer" : "more") : "no significant change");
    }
    summary += fmt::format("| {} | {} | {} |\n", model.name, repetitive.to_string(), change);
  }
  if (!notes.empty()) {
    summary += "\n## How the items were made\n\n";
    for (const auto& note : notes) summary += "- " + note + "\n";
  }
  write_file_atomic(folder / "summary.md", summary);

  // failure_cases.md: per model and task, the wrong answers a reader learns most from — for
  // multiple choice the most confident ones, for generation the first ones.
  std::string failures = fmt::format("# Failure cases `{}`\n", name);
  constexpr std::size_t shown = 8;
  for (const auto& model : models) {
    failures += fmt::format("\n## {}\n", model.name);
    for (const auto& report : model.reports) {
      std::vector<std::size_t> wrong;
      for (std::size_t i = 0; i < report.results.size(); ++i) {
        if (!report.results[i].correct) wrong.push_back(i);
      }
      failures += fmt::format("\n### {} — {} wrong of {}\n\n", report.task_name, wrong.size(),
                              report.results.size());
      if (wrong.empty()) continue;
      const bool scored = report.results[wrong.front()].confidence.has_value();
      if (scored) {
        std::stable_sort(wrong.begin(), wrong.end(), [&](std::size_t a, std::size_t b) {
          return report.results[a].confidence.value_or(0) >
                 report.results[b].confidence.value_or(0);
        });
      }
      failures += scored ? "| item | question | expected | answered | confidence |\n"
                           "|---|---|---|---|---|\n"
                         : "| item | question | expected | answered |\n|---|---|---|---|\n";
      for (std::size_t k = 0; k < std::min(shown, wrong.size()); ++k) {
        const auto& result = report.results[wrong[k]];
        const auto& meta = result.metadata;
        const std::string expected =
            meta.contains("answer") && meta["answer"].is_string()
                ? meta["answer"].get<std::string>()
                : (meta.contains("references") ? meta["references"].dump() : std::string("?"));
        failures += fmt::format("| {} | {} | {} | {} |", wrong[k], cell(question_of(result, meta)),
                                cell(expected), cell(result.prediction));
        failures +=
            scored ? fmt::format(" {:.2f} |\n", result.confidence.value_or(0)) : std::string("\n");
      }
    }
  }
  write_file_atomic(folder / "failure_cases.md", failures);
  return folder;
}

}  // namespace g2c::exercises
