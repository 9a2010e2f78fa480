// The narrow tasks of Part II (modules 13–15), made from TinyShakespeare itself (how a model is
// scored on them: task_scores.h). A 1M-parameter model cannot follow open instructions, but it can
// learn a task whose success is measurable:
//   speaker     user  Who says "<a line of at most 60 characters>"?   assistant  <SPEAKER>
//   completion  user  Continue: <the first half of a line>            assistant  <the rest of it>
//   chat        a short hand-written set in period voice (exercises/13-sft/courtier_chat.jsonl)
// Deterministic with a seed, and split by position: the corpus is cut into chunks of chunk_chars
// characters and every held_out_every-th chunk is held out, so a held-out line comes from text
// the training items never saw, while the speakers (who change from play to play along the
// corpus) occur on both sides. Files, as the Python edition's artifact contract has them:
//   artifacts/datasets/<name>/{train.jsonl, val.jsonl, manifest.json}
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "g2c/sft/chat_template.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises {

/// One task item: a user message and the reply the assistant should give.
struct TaskItem {
  std::string task;          // "speaker", "completion" or "chat"
  std::string prompt;        // the user's message
  std::string answer;        // the expected reply
  std::int64_t offset = -1;  // byte offset of the line in the corpus; -1 for hand-written items

  /// {{"user", prompt}, {"assistant", answer}}.
  std::vector<g2c::sft::Message> messages() const;
  /// {"task", "messages": [{"role", "content"}, ...], "offset"}: one JSONL line.
  nlohmann::json to_json() const;
  /// The item of one such line. ValueError naming what is missing.
  static TaskItem from_json(const nlohmann::json& line);
};

struct TaskDataOptions {
  std::uint64_t seed = 0;                  // shuffles which items are kept
  std::int64_t max_train_per_task = 4000;  // items kept per corpus task (after shuffling)
  std::int64_t max_val_per_task = 400;
  std::int64_t speakers = 12;  // the most frequent speakers that also speak in held-out text
  std::int64_t chunk_chars = 20'000;
  std::int64_t held_out_every = 10;  // chunk i is held out when i % held_out_every == last
};

struct TaskData {
  std::vector<TaskItem> train;        // speaker and completion items, then the chat pairs
  std::vector<TaskItem> val;          // speaker and completion items from held-out chunks
  std::vector<std::string> speakers;  // the speaker task's answers, most frequent first
  nlohmann::json manifest;            // builder, seed, options, counts per task and split, speakers
};

/// The speaker and completion items of `corpus` (TinyShakespeare's layout: speeches separated by
/// blank lines, each opening with "NAME:") plus the hand-written chat pairs (train only).
/// ValueError for options that select nothing.
TaskData build_task_data(std::string_view corpus, const TaskDataOptions& options = {});

/// The hand-written chat set, exercises/13-sft/courtier_chat.jsonl (one {"user", "assistant"}
/// object per line). ValueError naming the line of a malformed entry.
std::vector<TaskItem> load_chat_pairs();

/// Writes train.jsonl, val.jsonl and manifest.json under artifacts/datasets/<name> (beside
/// models_root()), each atomically; returns the folder.
std::filesystem::path write_task_data(const TaskData& data,
                                      const std::string& name = "shakespeare-tasks");

/// The task data of modules 13–15, and where it lives.
struct StoredTaskData {
  TaskData data;
  std::filesystem::path folder;  // artifacts/datasets/<name>
  bool read = false;             // read back from the folder (false: built and written now)
};

/// The task data set artifacts/datasets/<name> as the modules share it: read back when its
/// manifest says it was built by this builder with `options` from this corpus and this chat set
/// (a fingerprint of both), so 14 and 15 score exactly the items 13 wrote; otherwise (missing,
/// another seed, an edited chat set, a damaged file) built from `corpus` and written.
StoredTaskData stored_task_data(std::string_view corpus, const TaskDataOptions& options = {},
                                const std::string& name = "shakespeare-tasks");

/// `text` without the spaces, tabs and line ends around it.
std::string trim(std::string_view text);

/// The whitespace-separated words of `text`.
std::vector<std::string> words_of(const std::string& text);

/// The items of one task. Example: items_of(data.val, "speaker").
std::vector<TaskItem> items_of(const std::vector<TaskItem>& items, std::string_view task);

}  // namespace g2c::exercises
