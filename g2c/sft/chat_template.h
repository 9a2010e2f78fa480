// Module 13 — the chat template: one fixed way to turn a conversation into tokens, and the mask
// that says which of those tokens the model learns to write.
//
// The course's format (ChatML-lite). Each marker is one of the course tokenizer's reserved special
// tokens (module 04: "<|user|>" 258, "<|assistant|>" 259, "<|end|>" 262), so it is one id, never
// split into bytes:
//   user turn        "<|user|>\n" + content + "\n"
//   assistant turn   "<|assistant|>\n" + content + "<|end|>"        (no newline after <|end|>)
// A conversation is its turns concatenated. At inference the prompt is the conversation so far
// plus "<|assistant|>\n" (generation_prompt), and the reply ends where the model writes <|end|>.
//
// The loss mask of one rendered conversation (aligned with its ids, T of them):
//   <|user|>\nWho says: ...?\n <|assistant|>\n  KING RICHARD III <|end|>
//   0        0 ... 0         0              0   1 ...          1 1
// 1 exactly on what the assistant writes: its content and its <|end|> (without the end marker the
// model never learns to stop). The role marker before the reply is prompt, not reply: 0.
// A drift between the strings used in training and at inference is the classic way to lose what
// fine-tuning taught, so every program of modules 13–15 renders through this one class.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "g2c/sft/data.h"

namespace g2c::sft {

/// One turn of a conversation: role "user" or "assistant", and what was said.
/// Example: std::vector<Message> chat = {{"user", "Hi"}, {"assistant", "Hello"}};
struct Message {
  std::string role;
  std::string content;
  bool operator==(const Message&) const = default;
};

/// Whatever turns text into ids for the template. encode_with_vocab_size is what a model with
/// fewer ids than the tokenizer needs (a tokenizer artifact with more merges than the model was
/// trained with); its default encodes and refuses an id that does not fit. The course's own
/// tokenizers are adapted by CourseEncoder (course_encoder.h).
class TokenEncoder {
 public:
  virtual ~TokenEncoder() = default;
  virtual std::vector<std::int64_t> encode(std::string_view text) const = 0;
  /// ValueError naming the largest id when an id is >= vocab_size.
  virtual std::vector<std::int64_t> encode_with_vocab_size(std::string_view text,
                                                           std::int64_t vocab_size) const;
};

/// One rendered piece of a conversation encoded: tokenizer.encode(text), or
/// tokenizer.encode_with_vocab_size(text, *vocab_size) when a vocabulary size is given.
std::vector<std::int64_t> encode_template_chunk(const TokenEncoder& tokenizer,
                                                std::string_view text,
                                                std::optional<std::int64_t> vocab_size);

class ChatTemplate {
 public:
  static constexpr std::string_view USER = "<|user|>";
  static constexpr std::string_view ASSISTANT = "<|assistant|>";
  static constexpr std::string_view END = "<|end|>";

  /// The conversation as one string, each turn in the format above, in order (no alternation is
  /// required: [user, assistant, user] ends with the second user turn and its newline).
  /// ValueError for no messages or a role other than "user" and "assistant" (check_messages).
  /// Example: {{"user", "Hi"}, {"assistant", "Hello"}} ->
  ///          "<|user|>\nHi\n<|assistant|>\nHello<|end|>".
  std::string render(const std::vector<Message>& messages) const;

  /// The conversation's ids (those of tokenizer.encode(render(messages)) whenever the tokenizer
  /// encodes the turns' strings independently, as every course tokenizer does at the markers) and
  /// its mask: 1 on each assistant content token and on its <|end|>, 0 on everything else (user
  /// turns whole, the "<|assistant|>\n" before each reply). Encoded turn piece by turn piece with
  /// encode_template_chunk (`vocab_size`: the model's, when it has fewer ids than the tokenizer).
  /// Example (one id per character): {{"user", "X"}, {"assistant", "Y"}} -> 33 ids, the last 8
  /// ("Y<|end|>") masked 1.
  SFTExample render_with_mask(const std::vector<Message>& messages, const TokenEncoder& tokenizer,
                              std::optional<std::int64_t> vocab_size = std::nullopt) const;

  /// What the model continues at inference: render(messages) + "<|assistant|>\n". The messages
  /// usually end with a user turn. Example: {{"user", "Hi"}} -> "<|user|>\nHi\n<|assistant|>\n".
  std::string generation_prompt(const std::vector<Message>& messages) const;

  /// ValueError for an empty list (nothing to render) or an unknown role (naming it and its
  /// position; system prompts are not part of this template).
  static void check_messages(const std::vector<Message>& messages);
};

}  // namespace g2c::sft
