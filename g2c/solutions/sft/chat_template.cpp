// Module 13 — reference solution for g2c/sft/chat_template.cpp.
#include "g2c/sft/chat_template.h"

namespace g2c::sft {

std::string ChatTemplate::render(const std::vector<Message>& messages) const {
  check_messages(messages);
  std::string text;
  for (const auto& [role, content] : messages) {
    if (role == "user") {
      text += std::string(USER) + "\n" + content + "\n";
    } else {  // "assistant": check_messages allows nothing else
      text += std::string(ASSISTANT) + "\n" + content + std::string(END);
    }
  }
  return text;
}

SFTExample ChatTemplate::render_with_mask(const std::vector<Message>& messages,
                                          const TokenEncoder& tokenizer,
                                          std::optional<std::int64_t> vocab_size) const {
  check_messages(messages);
  SFTExample example;
  // Appends one piece's ids, every one of them with the same mask value.
  const auto append = [&](const std::string& piece, std::int64_t mask_value) {
    const auto piece_ids = encode_template_chunk(tokenizer, piece, vocab_size);
    example.ids.insert(example.ids.end(), piece_ids.begin(), piece_ids.end());
    example.mask.insert(example.mask.end(), piece_ids.size(), mask_value);
  };
  for (const auto& [role, content] : messages) {
    if (role == "user") {
      append(std::string(USER) + "\n" + content + "\n", 0);  // prompt
    } else {
      append(std::string(ASSISTANT) + "\n", 0);  // the role marker is prompt too
      append(content + std::string(END), 1);     // the reply, and the stop token
    }
  }
  return example;
}

}  // namespace g2c::sft
