#include "exercises/common/task_scores.h"

#include "g2c/sft/chat.h"

namespace g2c::exercises {

nlohmann::json TaskScore::to_json() const {
  return {{"task", task},
          {"exact", exact.to_json()},
          {"first_word", first_word.to_json()},
          {"stopped", stopped.to_json()},
          {"examples", examples}};
}

TaskScore score_task(g2c::transformer::TransformerLMImpl& model,
                     const g2c::tokenizer::TextTokenizer& tokenizer,
                     const std::vector<TaskItem>& items, std::int64_t max_new_tokens) {
  TaskScore score;
  score.task = items.empty() ? "" : items.front().task;
  // Every reply greedily, in batches of prompts of one length (chat_replies).
  std::vector<std::vector<g2c::sft::Message>> conversations;
  conversations.reserve(items.size());
  for (const auto& item : items) conversations.push_back({{"user", item.prompt}});
  const auto replies = g2c::sft::chat_replies(
      model, tokenizer, conversations, g2c::sft::ChatReplyOptions().max_new_tokens(max_new_tokens));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const auto& generated = replies[i];
    const bool stopped = generated.stopped;
    const auto reply = trim(generated.text);
    const auto answer = trim(item.answer);
    const auto reply_words = words_of(reply), answer_words = words_of(answer);
    const bool exact = reply == answer;
    const bool first = !reply_words.empty() && !answer_words.empty() &&
                       reply_words.front() == answer_words.front();
    score.exact.hits += exact;
    score.first_word.hits += first;
    score.stopped.hits += stopped;
    if (score.examples.size() < 8) {
      score.examples.push_back({{"prompt", item.prompt},
                                {"answer", answer},
                                {"reply", reply},
                                {"exact", exact},
                                {"stopped", stopped}});
    }
  }
  const auto total = static_cast<std::int64_t>(items.size());
  score.exact.total = score.first_word.total = score.stopped.total = total;
  return score;
}

}  // namespace g2c::exercises
