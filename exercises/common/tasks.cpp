#include "exercises/common/tasks.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "exercises/common/data.h"
#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sft/chat.h"

namespace g2c::exercises {

namespace {

/// Names what builds the items; change it whenever a change here would make other items from the
/// same corpus and options, so that stored data sets from before are built again.
constexpr std::string_view kBuilder = "g2c-cpp shakespeare-tasks v1";

struct Line {
  std::string text;
  std::int64_t offset = 0;
};

struct Speech {
  std::string speaker;
  std::vector<Line> lines;
};

}  // namespace

std::string trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

namespace {

/// "NAME:" on a line of its own opens a speech.
bool is_speaker_line(const std::string& line) {
  return line.size() >= 2 && line.size() <= 40 && line.back() == ':' &&
         std::isupper(static_cast<unsigned char>(line.front()));
}

/// TinyShakespeare's speeches: blocks separated by blank lines whose first line is "NAME:".
std::vector<Speech> parse_speeches(std::string_view corpus) {
  std::vector<Speech> speeches;
  bool block_start = true;
  std::size_t position = 0;
  while (position < corpus.size()) {
    auto end = corpus.find('\n', position);
    if (end == std::string_view::npos) end = corpus.size();
    const auto text = trim(corpus.substr(position, end - position));
    if (text.empty()) {
      block_start = true;
    } else if (block_start && is_speaker_line(text)) {
      speeches.push_back({text.substr(0, text.size() - 1), {}});
      block_start = false;
    } else {
      if (!speeches.empty() && !block_start) {
        speeches.back().lines.push_back({text, static_cast<std::int64_t>(position)});
      }
      block_start = false;
    }
    position = end + 1;
  }
  return speeches;
}

}  // namespace

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

namespace {

/// Fisher-Yates with a fixed generator: the same items on every platform for a given seed.
template <typename T>
void shuffle_with(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng() % i]);
}

void keep_first(std::vector<TaskItem>& items, std::int64_t count) {
  if (static_cast<std::int64_t>(items.size()) > count)
    items.resize(static_cast<std::size_t>(count));
}

}  // namespace

std::vector<g2c::sft::Message> TaskItem::messages() const {
  return {{"user", prompt}, {"assistant", answer}};
}

nlohmann::json TaskItem::to_json() const {
  return {{"task", task},
          {"messages",
           {{{"role", "user"}, {"content", prompt}}, {{"role", "assistant"}, {"content", answer}}}},
          {"offset", offset}};
}

TaskItem TaskItem::from_json(const nlohmann::json& line) {
  const auto& messages = line.at("messages");
  if (!messages.is_array() || messages.size() != 2) {
    throw ValueError(
        fmt::format("a task item has two messages (user, assistant), got {}", messages.dump()));
  }
  return {line.at("task").get<std::string>(), messages[0].at("content").get<std::string>(),
          messages[1].at("content").get<std::string>(), line.at("offset").get<std::int64_t>()};
}

namespace {

/// FNV-1a (64-bit) of the corpus and of the chat set, as a hex string: the same inputs give the
/// same fingerprint on every machine, so a stored data set can tell whether it is still theirs.
std::string source_fingerprint(std::string_view corpus, const std::vector<TaskItem>& chat) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&](std::string_view bytes) {
    for (const unsigned char byte : bytes) {
      hash ^= byte;
      hash *= 0x100000001b3ULL;
    }
    hash ^= 0xff;  // a separator, so that ("ab", "c") and ("a", "bc") differ
    hash *= 0x100000001b3ULL;
  };
  mix(corpus);
  for (const auto& item : chat) {
    mix(item.prompt);
    mix(item.answer);
  }
  return fmt::format("{:016x}", hash);
}

nlohmann::json options_json(const TaskDataOptions& options) {
  return {{"max_train_per_task", options.max_train_per_task},
          {"max_val_per_task", options.max_val_per_task},
          {"speakers", options.speakers},
          {"chunk_chars", options.chunk_chars},
          {"held_out_every", options.held_out_every}};
}

}  // namespace

TaskData build_task_data(std::string_view corpus, const TaskDataOptions& options) {
  if (options.chunk_chars < 1 || options.held_out_every < 2 || options.speakers < 2 ||
      options.max_train_per_task < 1 || options.max_val_per_task < 1) {
    throw ValueError(fmt::format(
        "task data options select nothing: chunk_chars {} (>= 1), held_out_every {} (>= 2), "
        "speakers {} (>= 2), max_train_per_task {} and max_val_per_task {} (>= 1)",
        options.chunk_chars, options.held_out_every, options.speakers, options.max_train_per_task,
        options.max_val_per_task));
  }
  const auto held_out = [&](std::int64_t offset) {
    return (offset / options.chunk_chars) % options.held_out_every == options.held_out_every - 1;
  };
  const auto speeches = parse_speeches(corpus);

  // The speakers: most lines in training text, among those who also speak in held-out text.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> counts;  // train, held-out lines
  for (const auto& speech : speeches) {
    for (const auto& line : speech.lines) {
      auto& [train, val] = counts[speech.speaker];
      (held_out(line.offset) ? val : train) += 1;
    }
  }
  std::vector<std::pair<std::int64_t, std::string>> ranked;
  for (const auto& [speaker, count] : counts) {
    if (count.second >= 5) ranked.emplace_back(count.first, speaker);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  TaskData data;
  for (std::size_t i = 0; i < ranked.size() && static_cast<std::int64_t>(i) < options.speakers;
       ++i) {
    data.speakers.push_back(ranked[i].second);
  }
  if (data.speakers.size() < 2) {
    throw ValueError(
        "the corpus has fewer than two speakers with held-out lines: is it "
        "TinyShakespeare (speeches opening with \"NAME:\")?");
  }

  std::vector<TaskItem> speaker_train, speaker_val, completion_train, completion_val;
  for (const auto& speech : speeches) {
    const bool known = std::find(data.speakers.begin(), data.speakers.end(), speech.speaker) !=
                       data.speakers.end();
    for (const auto& line : speech.lines) {
      const bool val = held_out(line.offset);
      const auto length = line.text.size();
      if (known && length >= 12 && length <= 60) {
        (val ? speaker_val : speaker_train)
            .push_back({"speaker", fmt::format("Who says \"{}\"?", line.text), speech.speaker,
                        line.offset});
      }
      const auto words = words_of(line.text);
      if (length >= 16 && length <= 60 && words.size() >= 4) {
        const auto half = words.size() / 2;
        std::string first, rest;
        for (std::size_t w = 0; w < words.size(); ++w) {
          auto& part = w < half ? first : rest;
          part += (part.empty() ? "" : " ") + words[w];
        }
        (val ? completion_val : completion_train)
            .push_back({"completion", "Continue: " + first, rest, line.offset});
      }
    }
  }
  std::mt19937_64 rng(options.seed);
  for (auto* items : {&speaker_train, &speaker_val, &completion_train, &completion_val}) {
    shuffle_with(*items, rng);
  }
  keep_first(speaker_train, options.max_train_per_task);
  keep_first(completion_train, options.max_train_per_task);
  keep_first(speaker_val, options.max_val_per_task);
  keep_first(completion_val, options.max_val_per_task);
  const auto chat = load_chat_pairs();

  data.train = speaker_train;
  data.train.insert(data.train.end(), completion_train.begin(), completion_train.end());
  data.train.insert(data.train.end(), chat.begin(), chat.end());
  data.val = speaker_val;
  data.val.insert(data.val.end(), completion_val.begin(), completion_val.end());
  data.manifest = {
      {"name", "shakespeare-tasks"},
      {"builder", kBuilder},
      {"source", "tinyshakespeare.txt"},
      {"seed", options.seed},
      {"split", fmt::format("by position: chunks of {} characters, every {}th held out",
                            options.chunk_chars, options.held_out_every)},
      {"options", options_json(options)},
      {"source_fingerprint", source_fingerprint(corpus, chat)},
      {"counts",
       {{"train",
         {{"speaker", speaker_train.size()},
          {"completion", completion_train.size()},
          {"chat", chat.size()}}},
        {"val", {{"speaker", speaker_val.size()}, {"completion", completion_val.size()}}}}},
      {"speakers", data.speakers},
      {"files", {"train.jsonl", "val.jsonl"}}};
  return data;
}

std::vector<TaskItem> load_chat_pairs() {
  const auto path = project_dir() / "exercises" / "13-sft" / "courtier_chat.jsonl";
  std::ifstream in(path);
  if (!in) {
    throw ValueError(
        fmt::format("cannot read the hand-written chat set {}: restore it with "
                    "git checkout -- exercises/13-sft/courtier_chat.jsonl",
                    path.string()));
  }
  std::vector<TaskItem> items;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty()) continue;
    try {
      const auto entry = nlohmann::json::parse(line);
      items.push_back({"chat", entry.at("user").get<std::string>(),
                       entry.at("assistant").get<std::string>(), -1});
    } catch (const nlohmann::json::exception& error) {
      throw ValueError(fmt::format("{}:{}: expected {{\"user\": ..., \"assistant\": ...}}: {}",
                                   path.string(), number, error.what()));
    }
  }
  return items;
}

std::filesystem::path write_task_data(const TaskData& data, const std::string& name) {
  const auto folder = g2c::pretraining::models_root().parent_path() / "datasets" / name;
  std::filesystem::create_directories(folder);
  for (const auto& [file, items] :
       {std::pair{"train.jsonl", &data.train}, {"val.jsonl", &data.val}}) {
    std::string lines;
    for (const auto& item : *items) lines += item.to_json().dump() + "\n";
    write_file_atomic(folder / file, lines);
  }
  write_json_atomic(folder / "manifest.json", data.manifest);
  return folder;
}

StoredTaskData stored_task_data(std::string_view corpus, const TaskDataOptions& options,
                                const std::string& name) {
  StoredTaskData stored;
  stored.folder = g2c::pretraining::models_root().parent_path() / "datasets" / name;
  const auto manifest_file = stored.folder / "manifest.json";
  try {
    if (std::filesystem::is_regular_file(manifest_file)) {
      const auto manifest = nlohmann::json::parse(read_file(manifest_file));
      const bool same =
          manifest.value("builder", "") == kBuilder &&
          manifest.value("seed", nlohmann::json()) == options.seed &&
          manifest.value("options", nlohmann::json()) == options_json(options) &&
          manifest.value("source_fingerprint", "") == source_fingerprint(corpus, load_chat_pairs());
      if (same) {
        auto& data = stored.data;
        for (const auto& [file, items] :
             {std::pair{"train.jsonl", &data.train}, {"val.jsonl", &data.val}}) {
          std::istringstream lines(read_file(stored.folder / file));
          for (std::string line; std::getline(lines, line);) {
            if (!trim(line).empty())
              items->push_back(TaskItem::from_json(nlohmann::json::parse(line)));
          }
        }
        data.speakers = manifest.at("speakers").get<std::vector<std::string>>();
        data.manifest = manifest;
        stored.read = true;
        return stored;
      }
    }
  } catch (const std::exception&) {
    // Damaged or from another build: built again below, and written over.
  }
  stored.data = build_task_data(corpus, options);
  stored.folder = write_task_data(stored.data, name);
  return stored;
}

std::vector<TaskItem> items_of(const std::vector<TaskItem>& items, std::string_view task) {
  std::vector<TaskItem> out;
  std::copy_if(items.begin(), items.end(), std::back_inserter(out),
               [&](const TaskItem& item) { return item.task == task; });
  return out;
}

}  // namespace g2c::exercises
