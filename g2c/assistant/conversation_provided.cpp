// Module 20 — the provided half of conversation.h: messages, and the conversation's bookkeeping.
#include <fmt/format.h>

#include "g2c/assistant/conversation.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::assistant {

Message::Message(std::string role, std::string content)
    : role_(std::move(role)), content_(std::move(content)) {
  if (role_ != USER_ROLE && role_ != ASSISTANT_ROLE) {
    throw AssistantError(fmt::format("Message: role must be one of ['{}', '{}'], got {}",
                                     ASSISTANT_ROLE, USER_ROLE,
                                     g2c::tokenizer::python_repr(role_)));
  }
  if (content_.empty()) {
    throw AssistantError(fmt::format(
        "Message: content must be a non-empty string (role {}); an empty turn says nothing",
        g2c::tokenizer::python_repr(role_)));
  }
}

std::ostream& operator<<(std::ostream& stream, const Message& message) {
  return stream << "Message(role=" << g2c::tokenizer::python_repr(message.role())
                << ", content=" << g2c::tokenizer::python_repr(message.content()) << ")";
}

namespace {

std::optional<std::int64_t> checked_cap(std::optional<std::int64_t> max_messages) {
  if (max_messages && *max_messages <= 0) {
    throw AssistantError(fmt::format(
        "Conversation: max_messages must be > 0 or unset (std::nullopt: no cap), got {}",
        *max_messages));
  }
  return max_messages;
}

}  // namespace

Conversation::Conversation(std::optional<std::int64_t> max_messages)
    : max_messages_(checked_cap(max_messages)) {}

Conversation::Conversation(std::vector<Message> messages, std::optional<std::int64_t> max_messages)
    : messages_(std::move(messages)), max_messages_(checked_cap(max_messages)) {}

Message Conversation::add_user(std::string content) {
  return messages_.emplace_back(std::string(USER_ROLE), std::move(content));
}

Message Conversation::add_assistant(std::string content) {
  return messages_.emplace_back(std::string(ASSISTANT_ROLE), std::move(content));
}

std::optional<Message> Conversation::last_user_message() const {
  for (auto message = messages_.rbegin(); message != messages_.rend(); ++message) {
    if (message->role() == USER_ROLE) return *message;
  }
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& stream, const Conversation& conversation) {
  stream << "Conversation(n_messages=" << conversation.size() << ", max=";
  if (conversation.max_messages()) {
    stream << *conversation.max_messages();
  } else {
    stream << "None";
  }
  return stream << ")";
}

}  // namespace g2c::assistant
