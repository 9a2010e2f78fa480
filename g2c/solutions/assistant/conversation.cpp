// Module 20, reference: "User: …" / "Assistant: …" entries, oldest first, one per line, only the
// newest max_messages when a cap is set.
#include "g2c/assistant/conversation.h"

namespace g2c::assistant {

std::string Conversation::format_for_prompt() const {
  std::size_t first = 0;  // the oldest message shown
  if (max_messages_ && messages_.size() > static_cast<std::size_t>(*max_messages_)) {
    first = messages_.size() - static_cast<std::size_t>(*max_messages_);  // drop the oldest
  }
  std::string text;
  for (std::size_t i = first; i < messages_.size(); ++i) {
    const auto& message = messages_[i];
    if (!text.empty()) text += "\n";
    text += message.role() == USER_ROLE ? "User: " : "Assistant: ";
    text += message.content();
  }
  return text;
}

}  // namespace g2c::assistant
