// Module 14's preference data, made from the same tasks as module 13's SFT data: for each task
// item one pair of replies to the same prompt, the one we prefer and one we do not.
//   speaker     chosen  the line's speaker          rejected  another of the task's speakers
//   completion  chosen  the rest of the line        rejected  its words shuffled, or its first word
//                                                             repeated (a degenerate reply)
// The pairs come from the task data's own split (held out by corpus position), so a held-out pair
// asks about text no training pair came from. Tokenized through the chat template: the prompt is
// everything the template does not mask ("<|user|>\n…\n<|assistant|>\n"), a reply is what it masks
// (the content and its <|end|>), so DPO sees exactly the strings SFT taught.
// Files, as the artifact contract has them: artifacts/datasets/shakespeare-preferences/
// {train.jsonl, val.jsonl, manifest.json}.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/tasks.h"
#include "g2c/dpo/data.h"
#include "g2c/tokenizer/text_tokenizer.h"

namespace g2c::exercises {

/// One preference pair in words.
struct PreferencePair {
  std::string task;  // "speaker" or "completion"
  std::string kind;  // how the rejected reply was made: "wrong_speaker", "shuffled", "repetition"
  std::string prompt;
  std::string chosen;
  std::string rejected;
  std::int64_t offset = -1;  // the task item's byte offset in the corpus
  nlohmann::json to_json() const;
};

/// A pair for every speaker and completion item of `items` (chat items have no wrong answer and
/// are skipped). `speakers`: the speaker task's answers, from which a wrong one is drawn.
/// Deterministic with `seed`. Example: a speaker item answered GLOUCESTER gives
/// {chosen "GLOUCESTER", rejected "HASTINGS", kind "wrong_speaker"}.
std::vector<PreferencePair> make_preference_pairs(const std::vector<TaskItem>& items,
                                                  const std::vector<std::string>& speakers,
                                                  std::uint64_t seed);

struct PreferenceData {
  std::vector<PreferencePair> train, val;
  std::vector<g2c::dpo::PreferenceExample> train_examples, val_examples;  // tokenized
  std::vector<std::string> train_tasks, val_tasks;  // each example's task, in the same order
  std::int64_t too_long = 0;     // pairs longer than the context, left out (never cut)
  std::int64_t max_seq_len = 0;  // the longest prompt + reply kept: the trainer's padded length
  std::filesystem::path folder;  // where the pairs were written
  nlohmann::json manifest;
  nlohmann::json to_json() const;  // manifest, folder, counts
};

/// The pairs of the task data's train and val items, tokenized with the chat template at the
/// model's vocabulary size, pairs longer than `context` left out, written under
/// artifacts/datasets/shakespeare-preferences. Prints what it did.
PreferenceData prepare_preference_data(const TaskData& tasks,
                                       const g2c::tokenizer::TextTokenizer& tokenizer,
                                       std::int64_t vocab_size, std::int64_t context,
                                       std::uint64_t seed);

}  // namespace g2c::exercises
