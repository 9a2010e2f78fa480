// Module 20 — your work: the conversation as the next prompt shows it.
#include "g2c/assistant/conversation.h"
#include "g2c/core/errors.h"

namespace g2c::assistant {

std::string Conversation::format_for_prompt() const {
  // TODO: the history block of the next turn's prompt. "" when messages_ is empty. Otherwise
  // keep only the newest *max_messages_ messages when max_messages_ is set and there are more
  // (drop the OLDEST: the recent exchange is what the next turn needs), and write each kept
  // message as one entry, "User: " + content for the user's role (USER_ROLE) and
  // "Assistant: " + content for the assistant's, the content as it is (its own newlines too).
  // Join the entries with "\n", oldest first. Operations: a start index, a loop, +=.
  // Hints, one step at a time: scripts/hint.sh 20 Conversation::format_for_prompt
  throw g2c::todo("Conversation::format_for_prompt", "g2c/assistant/conversation.cpp", "20");
}

}  // namespace g2c::assistant
