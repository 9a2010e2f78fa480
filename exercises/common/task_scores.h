// How a model does on the tasks of Part II (tasks.h): greedy replies to held-out items, scored
// by exact match, first word and whether the reply stopped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercises/common/proportion.h"
#include "exercises/common/tasks.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/transformer/transformer_lm.h"

namespace g2c::exercises {

/// How a model does on some items, replying greedily (g2c::sft::chat_reply, g2c/sft/chat.h).
struct TaskScore {
  std::string task;
  Proportion exact;       // reply == answer (both trimmed)
  Proportion first_word;  // the reply's first word == the answer's (completion's softer score)
  Proportion stopped;     // the reply ended with <|end|> within the token budget
  nlohmann::json examples = nlohmann::json::array();  // the first few {prompt, answer, reply}
  nlohmann::json to_json() const;
};

/// Scores the model on `items` (all of one task). Example: score_task(model, tok, val_speaker).
TaskScore score_task(g2c::transformer::TransformerLMImpl& model,
                     const g2c::tokenizer::TextTokenizer& tokenizer,
                     const std::vector<TaskItem>& items, std::int64_t max_new_tokens = 40);

}  // namespace g2c::exercises
