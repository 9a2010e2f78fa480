#include <algorithm>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/sft/chat_template.h"

namespace g2c::sft {

std::vector<std::int64_t> TokenEncoder::encode_with_vocab_size(std::string_view text,
                                                               std::int64_t vocab_size) const {
  auto ids = encode(text);
  const auto largest = std::max_element(ids.begin(), ids.end());
  if (largest != ids.end() && *largest >= vocab_size) {
    throw ValueError(fmt::format(
        "the text encodes to token id {} but the model has only {} ids: encode with the "
        "tokenizer the model was trained with, at the model's vocabulary size",
        *largest, vocab_size));
  }
  return ids;
}

std::vector<std::int64_t> encode_template_chunk(const TokenEncoder& tokenizer,
                                                std::string_view text,
                                                std::optional<std::int64_t> vocab_size) {
  return vocab_size ? tokenizer.encode_with_vocab_size(text, *vocab_size) : tokenizer.encode(text);
}

std::string ChatTemplate::generation_prompt(const std::vector<Message>& messages) const {
  return render(messages) + std::string(ASSISTANT) + "\n";
}

void ChatTemplate::check_messages(const std::vector<Message>& messages) {
  if (messages.empty()) {
    throw ValueError("a conversation needs at least one message, got none");
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& role = messages[i].role;
    if (role != "user" && role != "assistant") {
      throw ValueError(fmt::format(
          "unknown role '{}' in message {}: the chat template knows \"user\" and \"assistant\"",
          role, i));
    }
  }
}

}  // namespace g2c::sft
