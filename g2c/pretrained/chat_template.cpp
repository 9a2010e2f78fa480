#include "g2c/pretrained/chat_template.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::pretrained {

namespace {

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The value of the Jinja string literal whose opening quote is at text[quote], with Python's
// escapes (\n \t \r \\ \' \"); nullopt when the literal is not closed.
std::optional<std::string> string_literal(std::string_view text, std::size_t quote) {
  const char delimiter = text[quote];
  std::string value;
  for (std::size_t i = quote + 1; i < text.size(); ++i) {
    if (text[i] == delimiter) return value;
    if (text[i] != '\\' || i + 1 == text.size()) {
      value += text[i];
      continue;
    }
    const char escaped = text[++i];
    switch (escaped) {
      case 'n':
        value += '\n';
        break;
      case 't':
        value += '\t';
        break;
      case 'r':
        value += '\r';
        break;
      case '\\':
      case '\'':
      case '"':
        value += escaped;
        break;
      default:  // not an escape Jinja knows: kept as written
        value += '\\';
        value += escaped;
    }
  }
  return std::nullopt;
}

// Every string literal of the template (between {{ }} or {% %}) that holds "<|im_start|>system".
std::vector<std::string> system_literals(std::string_view jinja) {
  std::vector<std::string> literals;
  const std::string marker = std::string(kStart) + "system";
  for (std::size_t at = jinja.find(marker); at != std::string_view::npos;
       at = jinja.find(marker, at + 1)) {
    if (at == 0 || (jinja[at - 1] != '\'' && jinja[at - 1] != '"')) continue;
    if (auto literal = string_literal(jinja, at - 1)) literals.push_back(*literal);
  }
  return literals;
}

// "<|im_start|>system\n" + message + "<|im_end|>\n" -> message; nullopt for any other literal.
std::optional<std::string> default_system_message(const std::string& literal) {
  const std::string head = std::string(kStart) + "system\n";
  const std::string tail = std::string(kEnd) + "\n";
  if (literal.size() < head.size() + tail.size() || !literal.starts_with(head) ||
      !literal.ends_with(tail))
    return std::nullopt;
  return literal.substr(head.size(), literal.size() - head.size() - tail.size());
}

}  // namespace

ChatMLTemplate ChatMLTemplate::parse(std::string_view jinja) {
  if (jinja.empty())
    throw ValueError(
        "the model file has no chat template (tokenizer.chat_template); expected a "
        "ChatML template");
  if (!contains(jinja, kStart) || !contains(jinja, kEnd))
    throw ValueError(fmt::format(
        "the chat template is not ChatML: expected the markers {} and {}, found a template of {} "
        "characters without them: '{}'",
        kStart, kEnd, jinja.size(), jinja.substr(0, 80)));
  for (const std::string_view part :
       {"message['role']", "message['content']", "add_generation_prompt", "<|im_start|>assistant"})
    if (!contains(jinja, part))
      throw ValueError(fmt::format(
          "the chat template has the ChatML markers but no {}: expected each message written as "
          "<|im_start|>role\\ncontent<|im_end|>\\n and a generation prompt "
          "<|im_start|>assistant\\n",
          part));
  ChatMLTemplate chat;
  for (const std::string& literal : system_literals(jinja))
    if (auto message = default_system_message(literal)) {
      chat.default_system_ = *message;
      break;
    }
  return chat;
}

std::string ChatMLTemplate::format(const std::vector<ChatMessage>& messages,
                                   bool add_generation_prompt) const {
  if (messages.empty())  // as Hugging Face's apply_chat_template refuses it
    throw ValueError("cannot format an empty conversation: expected at least one message");
  std::string text;
  const auto append = [&](std::string_view role, std::string_view content) {
    text.append(kStart).append(role).append("\n").append(content).append(kEnd).append("\n");
  };
  if (default_system_ && messages.front().role != "system") append("system", *default_system_);
  for (const ChatMessage& message : messages) append(message.role, message.content);
  if (add_generation_prompt) text.append(kStart).append("assistant\n");
  return text;
}

}  // namespace g2c::pretrained
