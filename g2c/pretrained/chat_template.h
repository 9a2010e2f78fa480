// The chat template: how a conversation becomes the one string an instruction-tuned model reads.
// SmolLM2 was fine-tuned on ChatML, where each message is its role and its content between two
// control tokens:
//
// clang-format off
//   <|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n
//   <|im_start|>user\nWhat is the capital of France?<|im_end|>\n
//   <|im_start|>assistant\n                      <- the generation prompt: the model writes the reply
// clang-format on
//
// and generation stops when it emits <|im_end|>. A GGUF file carries its template as Jinja source
// (tokenizer.chat_template), which Hugging Face renders with a Jinja engine. This course has none:
// it recognises a ChatML template and renders what such a template renders. The one thing that
// varies from model to model, the system message put first when the conversation has none, is
// read out of the template's text. (Module 13's template, for the course's own models, is in
// g2c/sft/chat_template.h.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::pretrained {

/// One message of a conversation. Example: {"user", "What is the capital of France?"}.
struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

/// A ChatML chat template, read from the Jinja text of a model file.
class ChatMLTemplate {
 public:
  /// Recognises `jinja` as ChatML: it must hold the markers <|im_start|> and <|im_end|>, build each
  /// message from message['role'] and message['content'], and have a generation prompt
  /// '<|im_start|>assistant\n'. A string literal '<|im_start|>system\n...<|im_end|>\n' in it is the
  /// default system message. Anything else is refused with a ValueError saying what is missing.
  static ChatMLTemplate parse(std::string_view jinja);

  /// The conversation as the template renders it: the default system message first when the first
  /// message is not a system one, then every message, then the generation prompt if asked for.
  /// ValueError for an empty conversation, which Hugging Face refuses too.
  /// Example: {{"user", "Hi"}}, true -> "<|im_start|>system\nYou are a helpful AI assistant named
  /// SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n
  /// <|im_start|>assistant\n" (without the line break).
  std::string format(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  /// SmolLM2's: "You are a helpful AI assistant named SmolLM, trained by Hugging Face".
  const std::optional<std::string>& default_system() const { return default_system_; }

 private:
  std::optional<std::string> default_system_;
};

}  // namespace g2c::pretrained
