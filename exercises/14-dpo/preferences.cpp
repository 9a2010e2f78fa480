#include "exercises/14-dpo/preferences.h"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/pretraining/model_artifact.h"
#include "g2c/sft/chat_template.h"
#include "g2c/sft/course_encoder.h"

namespace g2c::exercises {

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// A prompt and a reply as DPO needs them: the template's unmasked ids, then its masked ones.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> prompt_and_reply(
    const g2c::sft::ChatTemplate& chat, const g2c::sft::TokenEncoder& encoder,
    const std::string& prompt, const std::string& reply, std::int64_t vocab_size) {
  const auto example =
      chat.render_with_mask({{"user", prompt}, {"assistant", reply}}, encoder, vocab_size);
  const auto reply_start = std::find(example.mask.begin(), example.mask.end(), 1);
  const auto split = reply_start - example.mask.begin();
  return {{example.ids.begin(), example.ids.begin() + split},
          {example.ids.begin() + split, example.ids.end()}};
}

}  // namespace

nlohmann::json PreferencePair::to_json() const {
  return {{"task", task},     {"kind", kind},         {"prompt", prompt},
          {"chosen", chosen}, {"rejected", rejected}, {"offset", offset}};
}

std::vector<PreferencePair> make_preference_pairs(const std::vector<TaskItem>& items,
                                                  const std::vector<std::string>& speakers,
                                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PreferencePair> pairs;
  for (const auto& item : items) {
    PreferencePair pair{item.task, "", item.prompt, item.answer, "", item.offset};
    if (item.task == "speaker") {
      if (speakers.size() < 2) {
        throw ValueError("make_preference_pairs: a wrong speaker needs at least two speakers");
      }
      do {
        pair.rejected = speakers[rng() % speakers.size()];
      } while (pair.rejected == item.answer);
      pair.kind = "wrong_speaker";
    } else if (item.task == "completion") {
      auto words = words_of(item.answer);
      if (words.empty()) continue;
      // Half the pairs reject a shuffle (right words, wrong order), half a repetition (the
      // failure small models fall into when they loop); a shuffle that changes nothing repeats.
      auto shuffled = words;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      if (rng() % 2 == 0 && shuffled != words) {
        pair.rejected = joined(shuffled);
        pair.kind = "shuffled";
      } else {
        pair.rejected =
            joined(std::vector<std::string>(std::max<std::size_t>(3, words.size()), words.front()));
        pair.kind = "repetition";
      }
    } else {
      continue;
    }
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

nlohmann::json PreferenceData::to_json() const {
  auto out = manifest;
  out["folder"] = folder.string();
  out["examples"] = {{"train", train_examples.size()}, {"val", val_examples.size()}};
  out["too_long"] = too_long;
  out["max_seq_len"] = max_seq_len;
  return out;
}

PreferenceData prepare_preference_data(const TaskData& tasks,
                                       const g2c::tokenizer::TextTokenizer& tokenizer,
                                       std::int64_t vocab_size, std::int64_t context,
                                       std::uint64_t seed) {
  PreferenceData data;
  data.train = make_preference_pairs(tasks.train, tasks.speakers, seed);
  data.val = make_preference_pairs(tasks.val, tasks.speakers, seed + 1);

  const g2c::sft::ChatTemplate chat;
  const g2c::sft::CourseEncoder encoder(tokenizer);
  const auto tokenize = [&](const std::vector<PreferencePair>& pairs,
                            std::vector<g2c::dpo::PreferenceExample>& out,
                            std::vector<std::string>& out_tasks) {
    for (const auto& pair : pairs) {
      auto [prompt_ids, chosen_ids] =
          prompt_and_reply(chat, encoder, pair.prompt, pair.chosen, vocab_size);
      auto rejected_ids =
          prompt_and_reply(chat, encoder, pair.prompt, pair.rejected, vocab_size).second;
      const auto length = static_cast<std::int64_t>(
          prompt_ids.size() + std::max(chosen_ids.size(), rejected_ids.size()));
      if (length > context) {
        ++data.too_long;
        continue;
      }
      data.max_seq_len = std::max(data.max_seq_len, length);
      out.push_back({std::move(prompt_ids), std::move(chosen_ids), std::move(rejected_ids)});
      out_tasks.push_back(pair.task);
    }
  };
  tokenize(data.train, data.train_examples, data.train_tasks);
  tokenize(data.val, data.val_examples, data.val_tasks);
  if (data.train_examples.empty() || data.val_examples.empty()) {
    throw ValueError(fmt::format(
        "no preference pair fits the model's context of {} tokens; use a model with a longer "
        "context",
        context));
  }

  std::map<std::string, std::int64_t> kinds;
  for (const auto& pair : data.train) kinds[pair.kind] += 1;
  data.manifest = {{"name", "shakespeare-preferences"},
                   {"module", "module-14"},
                   {"source", "shakespeare-tasks"},
                   {"seed", seed},
                   {"counts", {{"train", data.train.size()}, {"val", data.val.size()}}},
                   {"rejected_kinds", kinds},
                   {"notes",
                    "chosen: the task's answer; rejected: a wrong speaker, the completion's words "
                    "shuffled, or its first word repeated"}};
  data.folder =
      g2c::pretraining::models_root().parent_path() / "datasets" / "shakespeare-preferences";
  std::filesystem::create_directories(data.folder);
  for (const auto& [file, pairs] :
       {std::pair{"train.jsonl", &data.train}, {"val.jsonl", &data.val}}) {
    std::string lines;
    for (const auto& pair : *pairs) lines += pair.to_json().dump() + "\n";
    write_file_atomic(data.folder / file, lines);
  }
  write_json_atomic(data.folder / "manifest.json", data.manifest);
  fmt::print(
      "preference data: {} training pairs, {} held out ({} longer than the context left out), "
      "padded to {} tokens, in {}\n",
      data.train_examples.size(), data.val_examples.size(), data.too_long, data.max_seq_len,
      data.folder.string());
  return data;
}

}  // namespace g2c::exercises
