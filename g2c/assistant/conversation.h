// Module 20 — the conversation: what the user and the assistant said, across turns.
//
// Module 19's agent works one task: one message in, one run, one answer out. An assistant holds a
// conversation: the user's name from turn 1, the topic of turn 3, a clarifying question — later
// turns only make sense with the earlier ones in view. The Conversation keeps every message, and
// format_for_prompt renders the recent ones as the history block of the next turn's prompt:
//
//   conversation.add_user("My name is Ada.");
//   conversation.add_assistant("Hello, Ada.");
//   conversation.add_user("What is 2+2?");
//   conversation.add_assistant("4");
//   conversation.format_for_prompt()
//     -> "User: My name is Ada.\nAssistant: Hello, Ada.\nUser: What is 2+2?\nAssistant: 4"
//   with max_messages = 2 -> "User: What is 2+2?\nAssistant: 4"   (the newest kept)
//
// Two memories, two scopes. The agent's Scratchpad (module 19) is the working memory of one run:
// every thought, action and observation, high bandwidth, gone when the run ends. The Conversation
// is the memory between runs: only what was said (each question and its final answer), not how an
// answer was found — an old run's tool calls in the next prompt would read as actions still to
// take. Truncation drops the oldest messages: the recent exchange is what the next turn needs.
//
// Plain C++, no LibTorch. Message and Conversation are provided; format_for_prompt is yours
// (g2c/assistant/conversation.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/assistant/config.h"

namespace g2c::assistant {

/// The two roles a conversation holds. No "system": the assistant's instructions belong to its
/// prompt, not to what was said.
inline constexpr std::string_view USER_ROLE = "user";
inline constexpr std::string_view ASSISTANT_ROLE = "assistant";

/// One utterance: who said it and what. A value, fixed once made (getters, no setters): a recorded
/// turn is never edited — to take a message back, clear the conversation.
class Message {
 public:
  /// AssistantError for a role other than "user" or "assistant" ("Message: role must be one of
  /// ['assistant', 'user'], got 'system'") and for empty content ("Message: content must be a
  /// non-empty string"). Example: Message("user", "hi").
  Message(std::string role, std::string content);
  /// A null pointer is no text (the Python edition refuses a non-string): it does not compile.
  Message(std::string role, std::nullptr_t) = delete;

  const std::string& role() const { return role_; }
  const std::string& content() const { return content_; }
  bool operator==(const Message& other) const = default;

 private:
  std::string role_;
  std::string content_;
};

/// "Message(role='user', content='hi')".
std::ostream& operator<<(std::ostream& stream, const Message& message);

/// The chat history: every message in order, and the view of it the next prompt gets.
class Conversation {
 public:
  /// An empty conversation. max_messages caps what format_for_prompt shows (everything is kept);
  /// nullopt: no cap. AssistantError for max_messages <= 0: "Conversation: max_messages must be
  /// > 0 or unset (std::nullopt: no cap), got 0".
  explicit Conversation(std::optional<std::int64_t> max_messages = std::nullopt);
  /// A conversation seeded with `messages` (a saved transcript read back), with the same cap.
  /// Example: Conversation({Message("user", "hi"), Message("assistant", "hello")}).size() == 2.
  explicit Conversation(std::vector<Message> messages,
                        std::optional<std::int64_t> max_messages = std::nullopt);

  /// Appends a user message and returns a copy of it; AssistantError for empty content.
  Message add_user(std::string content);
  Message add_user(std::nullptr_t) = delete;
  /// Appends an assistant message and returns a copy of it; AssistantError for empty content.
  Message add_assistant(std::string content);
  Message add_assistant(std::nullptr_t) = delete;

  /// Drops every message; the conversation is reusable (same cap, fresh history).
  void clear() { messages_.clear(); }

  /// Every message, oldest first. Read-only: grow the conversation with add_user/add_assistant.
  const std::vector<Message>& messages() const { return messages_; }
  std::optional<std::int64_t> max_messages() const { return max_messages_; }
  std::size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  std::vector<Message>::const_iterator begin() const { return messages_.begin(); }
  std::vector<Message>::const_iterator end() const { return messages_.end(); }

  /// The latest user message; nullopt when the user has said nothing yet.
  std::optional<Message> last_user_message() const;

  /// Your work: the history as the next prompt shows it, one message after another, each as
  /// "User: <content>" or "Assistant: <content>" (the content as it is, newlines included: the
  /// prefix appears once per message), joined by "\n"; only the newest max_messages messages
  /// when there are more; "" for no messages. It never includes a message not yet added — the
  /// question being answered goes into the prompt separately (Assistant::chat).
  /// Example: user "hi", assistant "hello" -> "User: hi\nAssistant: hello".
  std::string format_for_prompt() const;

 private:
  std::vector<Message> messages_;
  std::optional<std::int64_t> max_messages_;
};

/// "Conversation(n_messages=2, max=10)"; "max=None" without a cap, as the Python edition prints.
std::ostream& operator<<(std::ostream& stream, const Conversation& conversation);

}  // namespace g2c::assistant
